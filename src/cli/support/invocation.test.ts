import { describe, expect, it } from "vitest";
import { invocation } from "./invocation.ts";

/** Hints name the command as the user typed it, so they can be pasted back (issue #30). */
describe("invocation", () => {
  it("is `node <path>` for the Quick start's `node bin/slipway.js`, relative to where the user is", () => {
    expect(invocation(["/usr/bin/node", "/home/me/slipway/bin/slipway.js"], {}, "/home/me/slipway")).toBe("node bin/slipway.js");
    expect(invocation(["/usr/bin/node", "/home/me/slipway/bin/slipway.js"], {}, "/home/me/slipway/examples")).toBe("node /home/me/slipway/bin/slipway.js");
    expect(invocation(["/usr/bin/node", "/home/me/my agents/bin/slipway.js"], {}, "/tmp")).toBe("node '/home/me/my agents/bin/slipway.js'");
  });

  it("is `slipway` when it runs through a bin link (npm install -g, npm link), and `npx slipway` under npx", () => {
    expect(invocation(["/usr/bin/node", "/usr/local/bin/slipway"], {}, "/tmp")).toBe("slipway");
    expect(invocation(["/usr/bin/node", "/proj/node_modules/.bin/slipway"], { npm_command: "exec" }, "/proj")).toBe("npx slipway");
    // A `node bin/slipway.js` started under something npx ran (npx vitest) inherits npm_command.
    expect(invocation(["/usr/bin/node", "/proj/bin/slipway.js"], { npm_command: "exec" }, "/proj")).toBe("node bin/slipway.js");
  });

  it("is `node bin/slipway.js` under `npm start`, which runs it from the project's root", () => {
    expect(invocation(["/usr/bin/node", "/srv/slipway/bin/slipway.js"], { npm_command: "run-script", npm_lifecycle_event: "start" }, "/srv/slipway")).toBe(
      "node bin/slipway.js",
    );
  });
});
