// dsv41-sparks: Pi's requests to the DeepSeek-V4.1-Flash deployment on two
// DGX Sparks go without an output-token limit. Pi always sends one (its own
// estimate of what is left of the context, e.g. 249,729), which the server
// takes as a cap; without it an answer runs to its natural end. Requests to
// every other provider are left as they are. Installed by pi/install.sh.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

const PROVIDER = "dsv41-sparks";

export default function (pi: ExtensionAPI) {
  pi.on("before_provider_request", (event, ctx) => {
    if (ctx.model?.provider !== PROVIDER) return undefined;
    const payload = event.payload;
    if (!payload || typeof payload !== "object" || Array.isArray(payload)) return undefined;
    const { max_tokens, max_completion_tokens, ...rest } = payload as Record<string, unknown>;
    void max_tokens;
    void max_completion_tokens;
    return rest;
  });
}
