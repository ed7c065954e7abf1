import { api, putUpload } from "../api.js";
import { h, replace } from "../dom.js";
import { secretsEditor } from "../secrets-editor.js";
import { projectFiles, tarGz } from "../tar.js";

/**
 * A new deployment from a folder or an archive chosen in the browser (as `slipway deploy
 * <dir>` makes one: create, ask for an upload URL, PUT the .tar.gz, PATCH its path), or
 * from a git repository.
 */
export function renderCreate(main) {
  const field = (label, input, hint) =>
    h("div", { class: "field" }, h("label", { for: input.id }, label), input, hint ? h("p", { class: "hint", id: `${input.id}-hint` }, hint) : null);
  const name = h("input", { id: "name", required: true, maxlength: 255, autocomplete: "off" });
  const sourceKind = h(
    "select",
    { id: "source-kind", onchange: () => showSource() },
    h("option", { value: "folder" }, "Upload a folder"),
    h("option", { value: "archive" }, "Upload an archive (.tar.gz)"),
    h("option", { value: "git" }, "A git repository"),
  );
  const folder = h("input", { id: "folder", type: "file", webkitdirectory: true, multiple: true });
  const archive = h("input", { id: "archive", type: "file", accept: ".tar.gz,.tgz,application/gzip" });
  const repoUrl = h("input", { id: "repo-url", type: "url", placeholder: "https://git.example.com/team/agent.git" });
  const repoRef = h("input", { id: "repo-ref", value: "main" });
  const integration = h("select", { id: "integration" }, h("option", { value: "" }, "None (a public repository)"));
  const configPath = h("input", { id: "config-path", value: "langgraph.json" });
  const minScale = h("input", { id: "min-scale", type: "number", min: 1, max: 10, value: 1 });
  const memory = h("input", { id: "memory", type: "number", min: 128, step: 128, placeholder: "default" });
  const secrets = secretsEditor("create-secret");
  const progress = h("p", { class: "progress", role: "status", "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert" });
  const submit = h("button", { type: "submit" }, "Create deployment");
  const sources = {
    folder: field("Project folder", folder, "The folder that holds langgraph.json. node_modules and .git are left out."),
    archive: field("Archive", archive, "A .tar.gz of the project."),
    git: h("div", {}, field("Repository URL", repoUrl), field("Branch or ref", repoRef), field("Integration", integration)),
  };
  function showSource() {
    for (const [kind, element] of Object.entries(sources)) element.hidden = kind !== sourceKind.value;
  }
  showSource();
  api("GET", "/v1/integrations/github/install")
    .then((list) => integration.append(...list.map((item) => h("option", { value: item.id }, `${item.name} (${item.base_url})`))))
    .catch(() => {});

  replace(
    main,
    h("h1", {}, "New deployment"),
    h(
      "form",
      {
        class: "card",
        onsubmit: (event) => {
          event.preventDefault();
          create();
        },
      },
      field("Name", name),
      field("Source", sourceKind),
      ...Object.values(sources),
      field("Path of langgraph.json", configPath),
      h("div", { class: "columns" }, field("Processes (min_scale)", minScale), field("Memory per process (MB)", memory)),
      secrets.element,
      error,
      progress,
      submit,
    ),
  );
  name.focus();

  async function create() {
    error.textContent = "";
    submit.disabled = true;
    try {
      const kind = sourceKind.value;
      const archiveBlob = kind === "git" ? null : await packed(kind);
      const resourceSpec = { min_scale: Number(minScale.value) || 1, ...(memory.value ? { memory_mb: Number(memory.value) } : {}) };
      const git = kind === "git";
      progress.textContent = "Creating the deployment…";
      const deployment = await api("POST", "/v2/deployments", {
        name: name.value,
        source: git ? "github" : "internal_source",
        source_config: {
          deployment_type: "dev",
          resource_spec: resourceSpec,
          ...(git ? { repo_url: repoUrl.value.trim(), ...(integration.value ? { integration_id: integration.value } : {}) } : {}),
        },
        source_revision_config: {
          langgraph_config_path: configPath.value.trim() || "langgraph.json",
          ...(git ? { repo_ref: repoRef.value.trim() || "main" } : {}),
        },
        secrets: secrets.values(),
      });
      if (!git) {
        progress.textContent = `Uploading ${Math.ceil(archiveBlob.size / 1024)} KB…`;
        const target = await api("POST", `/v2/deployments/${deployment.id}/upload-url`);
        await putUpload(target.upload_url, archiveBlob);
        await api("PATCH", `/v2/deployments/${deployment.id}`, { source_revision_config: { source_tarball_path: target.object_path } });
      }
      location.hash = `#/d/${deployment.id}`;
    } catch (failure) {
      error.textContent = `Could not create the deployment: ${failure.message}`;
      progress.textContent = "";
    } finally {
      submit.disabled = false;
    }
  }

  async function packed(kind) {
    if (kind === "archive") {
      const file = archive.files[0];
      if (!file) throw new Error("choose an archive");
      return file;
    }
    const files = projectFiles(folder.files);
    if (files.length === 0) throw new Error("choose a project folder");
    progress.textContent = `Packing ${files.length} files…`;
    return tarGz(files);
  }
}
