import { Type, type Static } from "@sinclair/typebox";
import { Uuid } from "../deployments/wire.ts";

/** Wire shapes of uploaded sources: the signed URL and what a PUT to it answers. */

export const UploadUrl = Type.Object(
  {
    upload_url: Type.String({ description: "PUT the gzipped tarball here, within an hour; the URL is its own credential." }),
    object_path: Type.String({ description: "Give it as source_revision_config.source_tarball_path once uploaded." }),
  },
  { title: "UploadUrl" },
);
export type UploadUrl = Static<typeof UploadUrl>;

export const UploadReceived = Type.Object({ object_path: Type.String(), size_bytes: Type.Integer(), sha256: Type.String() }, { title: "UploadReceived" });
export type UploadReceived = Static<typeof UploadReceived>;

export const UploadParams = Type.Object({ deployment_id: Uuid(), upload_id: Uuid() });

export const UploadQuery = Type.Object({
  expires: Type.Integer({ minimum: 0, description: "Expiry, in milliseconds since the epoch (part of the signed URL)." }),
  signature: Type.String({ minLength: 1, maxLength: 200 }),
});
