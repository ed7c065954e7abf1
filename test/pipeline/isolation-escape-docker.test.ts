import { describeEscapeProbe } from "./escape-probe-suite.ts";
import { dockerHost, removeImagesOf } from "./docker.ts";

// The escape probe on the Docker runtime (a container per replica), on both storage back ends.
describeEscapeProbe(
  {
    name: "docker",
    args: () => ["--runtime", "docker", "--docker-host", dockerHost()],
    announces: '"runtime":"docker"',
    initIsOwn: true,
    ownBuildAtHostPath: false,
    cleanUp: removeImagesOf,
  },
  ["pglite", "postgres"],
);
