import { notFound } from "../../http/errors.ts";

/** The 404s of a deployment and of one of its revisions, worded as the vendor's. */
export const deploymentNotFound = (id: string) => notFound(`Deployment ID ${id} not found.`);
export const revisionNotFound = (id: string) => notFound(`Revision ID ${id} not found.`);
