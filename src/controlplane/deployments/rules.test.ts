import { describe, expect, it } from "vitest";
import { STATUS_OF, SlipwayError } from "../../http/errors.ts";
import type { DeploymentRow, StoredSourceConfig } from "./repository.ts";
import {
  checkApplicable,
  checkBuildOnPush,
  checkImmutable,
  checkRequiredOnCreate,
  checkSleepSetting,
  checkSourceFields,
  givenRevisionConfig,
  givenSourceConfig,
  storedSourceConfig,
  wantsNewRevision,
  type RevisionConfigInput,
  type SourceConfigInput,
} from "./rules.ts";
import type { DeploymentSource } from "./schemas.ts";

/** The SlipwayError `run` throws; fails the test when it throws nothing or something else. */
function refusal(run: () => void): SlipwayError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SlipwayError);
    return error as SlipwayError;
  }
  throw new Error("expected a refusal, got none");
}

/** `run` is refused with a 422 whose one problem sits at `loc`. */
function expect422(run: () => void, loc: (string | number)[], type = "value_error"): SlipwayError {
  const error = refusal(run);
  expect(STATUS_OF[error.code]).toBe(422);
  expect(error.problems).toHaveLength(1);
  expect(error.problems[0]).toMatchObject({ loc, type });
  // The message names the field without the request part.
  expect(error.message.startsWith(`${loc.slice(1).join(".")}: `)).toBe(true);
  return error;
}

function expect400(run: () => void, message: RegExp): void {
  const error = refusal(run);
  expect(STATUS_OF[error.code]).toBe(400);
  expect(error.message).toMatch(message);
}

const SOURCES: DeploymentSource[] = ["github", "internal_source", "external_docker", "internal_docker"];
const ID = "0F8FAD5B-D9CB-469F-A165-70867728950E";

describe("givenSourceConfig", () => {
  it("keeps the given fields and drops the null ones", () => {
    expect(givenSourceConfig({ repo_url: "https://x/y", build_on_push: false, custom_url: null, listener_id: undefined })).toEqual({
      repo_url: "https://x/y",
      build_on_push: false,
    });
  });

  it("takes a missing or null config as nothing given", () => {
    expect(givenSourceConfig(undefined)).toEqual({});
    expect(givenSourceConfig(null)).toEqual({});
  });
});

describe("givenRevisionConfig", () => {
  it("drops null fields and folds graph_config_path into langgraph_config_path", () => {
    expect(givenRevisionConfig({ repo_ref: "main", image_uri: null, graph_config_path: "langgraph.json" })).toEqual({
      repo_ref: "main",
      langgraph_config_path: "langgraph.json",
    });
    expect(givenRevisionConfig(null)).toEqual({});
  });

  it("accepts the alias beside the same langgraph_config_path", () => {
    expect(givenRevisionConfig({ langgraph_config_path: "a/langgraph.json", graph_config_path: "a/langgraph.json" })).toEqual({
      langgraph_config_path: "a/langgraph.json",
    });
  });

  it("refuses an alias that disagrees with langgraph_config_path, at the alias", () => {
    const error = expect422(
      () => givenRevisionConfig({ langgraph_config_path: "a.json", graph_config_path: "b.json" }),
      ["body", "source_revision_config", "graph_config_path"],
    );
    expect(error.message).toMatch(/Conflicts with langgraph_config_path/);
  });
});

describe("checkApplicable", () => {
  /** Per field: the sources it applies to (the vendor's "Only applicable for ..." notes). */
  const SOURCE_CONFIG: [keyof SourceConfigInput, unknown, DeploymentSource[]][] = [
    ["integration_id", ID, ["github"]],
    ["repo_url", "https://github.com/example/agent", ["github"]],
    ["custom_url", "https://agent.example.com", ["external_docker", "internal_docker"]],
    ["listener_id", ID, ["external_docker", "internal_docker"]],
    ["install_command", "npm ci", ["github", "internal_source"]],
    ["build_command", "npm run build", ["github", "internal_source"]],
    ["deployment_type", "prod", SOURCES],
    ["build_on_push", false, SOURCES],
  ];
  const REVISION: [keyof RevisionConfigInput, string, DeploymentSource[]][] = [
    ["repo_ref", "main", ["github"]],
    ["langgraph_config_path", "langgraph.json", ["github", "internal_source"]],
    ["image_uri", "docker.io/example/agent:1", ["external_docker", "internal_docker"]],
    ["source_tarball_path", "uploads/x.tar.gz", ["internal_source"]],
  ];

  for (const [field, value, applies] of SOURCE_CONFIG) {
    it(`source_config.${field} applies to ${applies.join(", ")} only`, () => {
      for (const source of SOURCES) {
        const run = () => checkApplicable(source, { [field]: value }, {}, false);
        if (applies.includes(source)) expect(run).not.toThrow();
        else expect(expect422(run, ["body", "source_config", field]).message).toContain(`Not applicable for source '${source}'`);
      }
    });
  }

  for (const [field, value, applies] of REVISION) {
    it(`source_revision_config.${field} applies to ${applies.join(", ")} only`, () => {
      for (const source of SOURCES) {
        const run = () => checkApplicable(source, {}, { [field]: value }, false);
        if (applies.includes(source)) expect(run).not.toThrow();
        else expect422(run, ["body", "source_revision_config", field]);
      }
    });
  }

  it("build_on_push: true is for github only (false is harmless anywhere)", () => {
    expect(() => checkApplicable("github", { build_on_push: true }, {}, false)).not.toThrow();
    for (const source of SOURCES.filter((s) => s !== "github")) {
      expect422(() => checkApplicable(source, { build_on_push: true }, {}, false), ["body", "source_config", "build_on_push"]);
    }
  });

  it("listener_config needs a listener_id", () => {
    const config = { k8s_namespace: "agents" };
    expect(() => checkApplicable("external_docker", { listener_id: ID, listener_config: config }, {}, false)).not.toThrow();
    const error = expect422(() => checkApplicable("external_docker", { listener_config: config }, {}, false), ["body", "source_config", "listener_config"]);
    expect(error.message).toMatch(/Requires listener_id/);
  });

  it("secret_references are for image sources only", () => {
    for (const source of ["external_docker", "internal_docker"] as const) {
      expect(() => checkApplicable(source, {}, {}, true)).not.toThrow();
    }
    for (const source of ["github", "internal_source"] as const) {
      expect422(() => checkApplicable(source, {}, {}, true), ["body", "secret_references"]);
    }
  });
});

describe("checkRequiredOnCreate", () => {
  const complete: Record<DeploymentSource, [SourceConfigInput, RevisionConfigInput]> = {
    github: [{ repo_url: "https://github.com/example/agent" }, { langgraph_config_path: "langgraph.json" }],
    internal_source: [{}, { langgraph_config_path: "langgraph.json" }],
    external_docker: [{}, { image_uri: "example/agent:1" }],
    internal_docker: [{}, { image_uri: "example/agent:1" }],
  };

  it("accepts each source with what it needs (internal_source without its tarball, named later)", () => {
    for (const source of SOURCES) expect(() => checkRequiredOnCreate(source, ...complete[source])).not.toThrow();
  });

  it("refuses a missing or empty required field as 'missing', naming it", () => {
    const cases: [DeploymentSource, SourceConfigInput, RevisionConfigInput, (string | number)[]][] = [
      ["github", {}, { langgraph_config_path: "langgraph.json" }, ["body", "source_config", "repo_url"]],
      ["github", { repo_url: "" }, { langgraph_config_path: "langgraph.json" }, ["body", "source_config", "repo_url"]],
      ["github", { repo_url: "https://github.com/example/agent" }, {}, ["body", "source_revision_config", "langgraph_config_path"]],
      ["internal_source", {}, { langgraph_config_path: "" }, ["body", "source_revision_config", "langgraph_config_path"]],
      ["external_docker", {}, {}, ["body", "source_revision_config", "image_uri"]],
      ["internal_docker", {}, { image_uri: "" }, ["body", "source_revision_config", "image_uri"]],
    ];
    for (const [source, config, revision, loc] of cases) {
      const error = expect422(() => checkRequiredOnCreate(source, config, revision), loc, "missing");
      expect(error.message).toContain(`Field required for source '${source}'`);
    }
  });
});

describe("checkSourceFields", () => {
  it("accepts ordinary values and absent ones", () => {
    expect(() => checkSourceFields({}, {})).not.toThrow();
    expect(() =>
      checkSourceFields(
        { repo_url: "https://github.com/example/agent.git" },
        { repo_ref: "refs/tags/v1.0.0", langgraph_config_path: "apps/agent/langgraph.json" },
      ),
    ).not.toThrow();
  });

  it("refuses each git-looking field git could misread, at that field", () => {
    expect422(() => checkSourceFields({ repo_url: "--upload-pack=/tmp/x" }, {}), ["body", "source_config", "repo_url"]);
    expect422(() => checkSourceFields({ repo_url: "file:///etc/passwd" }, {}), ["body", "source_config", "repo_url"]);
    expect422(() => checkSourceFields({}, { repo_ref: "-b" }), ["body", "source_revision_config", "repo_ref"]);
    expect422(() => checkSourceFields({}, { repo_ref: "main..dev" }), ["body", "source_revision_config", "repo_ref"]);
    expect422(() => checkSourceFields({}, { langgraph_config_path: "../langgraph.json" }), ["body", "source_revision_config", "langgraph_config_path"]);
    expect422(() => checkSourceFields({}, { langgraph_config_path: "/etc/langgraph.json" }), ["body", "source_revision_config", "langgraph_config_path"]);
  });
});

describe("checkBuildOnPush", () => {
  const loc = ["body", "source_config", "build_on_push"];

  it("allows building on push to a branch, and a tag without building on push", () => {
    expect(() => checkBuildOnPush(true, "main", loc)).not.toThrow();
    expect(() => checkBuildOnPush(true, "refs/heads/main", loc)).not.toThrow();
    expect(() => checkBuildOnPush(true, undefined, loc)).not.toThrow();
    expect(() => checkBuildOnPush(false, "refs/tags/v1", loc)).not.toThrow();
    expect(() => checkBuildOnPush(null, "refs/tags/v1", loc)).not.toThrow();
  });

  it("refuses building on push to a tag, at the location it is given", () => {
    expect(expect422(() => checkBuildOnPush(true, "refs/tags/v1.0.0", loc), loc).message).toMatch(/tags are immutable/);
    const other = ["body", "source_revision_config", "repo_ref"];
    expect422(() => checkBuildOnPush(true, "refs/tags/v2", other), other);
  });
});

describe("checkImmutable", () => {
  const current: DeploymentRow = {
    id: "d1",
    workspace_id: "w1",
    name: "agent",
    source: "external_docker",
    source_config: {
      integration_id: null,
      repo_url: null,
      deployment_type: "dev",
      build_on_push: false,
      custom_url: null,
      listener_id: ID.toLowerCase(),
      listener_config: { k8s_namespace: "agents" },
      install_command: null,
      build_command: null,
    },
    status: "READY",
    latest_revision_id: null,
    active_revision_id: null,
    image_version: null,
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    sleep_after_minutes: null,
    sleeping_since: null,
  };

  it("accepts a patch that sends the current values back", () => {
    expect(() =>
      checkImmutable(current, {
        name: "agent",
        source: "external_docker",
        source_config: {
          deployment_type: "dev",
          listener_id: ID, // ids compare case-insensitively
          listener_config: { k8s_namespace: "agents" },
          custom_url: "https://elsewhere.example.com", // not immutable
        },
      }),
    ).not.toThrow();
    // A null field is "not given", not "cleared".
    expect(() => checkImmutable(current, { source_config: { listener_id: null, repo_url: null } })).not.toThrow();
  });

  it("compares objects without their null fields", () => {
    expect(() => checkImmutable(current, { source_config: { listener_config: { k8s_namespace: "agents" } } })).not.toThrow();
    const bare = { ...current, source_config: { ...current.source_config, listener_config: null } };
    expect(() => checkImmutable(bare, { source_config: { listener_config: { k8s_namespace: null } } })).not.toThrow();
    expect400(() => checkImmutable(bare, { source_config: { listener_config: { k8s_namespace: "other" } } }), /listener_config cannot be changed/);
  });

  it("refuses a new name, source or revision_source with 400", () => {
    expect400(() => checkImmutable(current, { name: "renamed" }), /name cannot be changed/);
    expect400(() => checkImmutable(current, { source: "github" }), /source cannot be changed/);
    expect400(() => checkImmutable(current, { revision_source: "internal_docker" }), /revision_source 'internal_docker' differs/);
  });

  it("refuses a change to each immutable source_config field with 400", () => {
    const changes: [keyof SourceConfigInput, unknown][] = [
      ["integration_id", "1b4e28ba-2fa1-11d2-883f-0016d3cca427"],
      ["repo_url", "https://github.com/example/other"],
      ["deployment_type", "prod"],
      ["listener_id", "1b4e28ba-2fa1-11d2-883f-0016d3cca427"],
      ["listener_config", { k8s_namespace: "elsewhere" }],
    ];
    for (const [field, value] of changes) {
      expect400(() => checkImmutable(current, { source_config: { [field]: value } }), new RegExp(`source_config\\.${field} cannot be changed`));
    }
  });
});

describe("storedSourceConfig", () => {
  it("fills the defaults on create and lower-cases ids", () => {
    expect(storedSourceConfig(undefined, { integration_id: ID, repo_url: "https://github.com/Example/Agent" })).toEqual({
      integration_id: ID.toLowerCase(),
      repo_url: "https://github.com/Example/Agent",
      deployment_type: "dev",
      build_on_push: false,
      custom_url: null,
      listener_id: null,
      listener_config: null,
      install_command: null,
      build_command: null,
    });
  });

  it("keeps what a patch leaves out and takes what it gives, false included", () => {
    const base: StoredSourceConfig = { ...storedSourceConfig(undefined, {}), build_on_push: true, install_command: "npm ci" };
    const next = storedSourceConfig(base, { build_on_push: false, build_command: "npm run build" });
    expect(next).toMatchObject({ build_on_push: false, install_command: "npm ci", build_command: "npm run build", deployment_type: "dev" });
  });
});

describe("wantsNewRevision", () => {
  it("is true for a new revision config, secrets, secret references or resources", () => {
    expect(wantsNewRevision({}, { image_uri: "example/agent:2" })).toBe(true);
    expect(wantsNewRevision({ secrets: [] }, {})).toBe(true);
    expect(wantsNewRevision({ secret_references: [] }, {})).toBe(true);
    expect(wantsNewRevision({ source_config: { resource_spec: { min_scale: 1 } } as never }, {})).toBe(true);
  });

  it("is false for source_config settings alone, and for nulls", () => {
    expect(wantsNewRevision({}, {})).toBe(false);
    expect(wantsNewRevision({ source_config: { build_on_push: true, custom_url: "https://x.example.com" } }, {})).toBe(false);
    expect(wantsNewRevision({ secrets: null, secret_references: null, source_config: { resource_spec: null } }, {})).toBe(false);
  });
});

describe("checkSleepSetting", () => {
  const loc = ["body", "slipway_sleep_after_minutes"];

  it("accepts any setting on the local runtime, and never (0) or the default (null) on Docker", () => {
    for (const minutes of [undefined, null, 0, 1, 15]) expect(() => checkSleepSetting(minutes, false)).not.toThrow();
    for (const minutes of [undefined, null, 0]) expect(() => checkSleepSetting(minutes, true)).not.toThrow();
  });

  it("refuses a deployment that would sleep on the Docker runtime, at the field", () => {
    expect(expect422(() => checkSleepSetting(5, true), loc).message).toMatch(/do not sleep on the Docker runtime/);
  });
});
