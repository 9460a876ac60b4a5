// The text of `kaos-operator --help`.
export const USAGE = `Usage:
  kaos-operator lint [options] <file | directory | ->...
  kaos-operator default [options] <file | directory | ->...

lint     runs the webhooks' defaulting and validation over every kaos.tools object in the
         manifests, with references resolved across the whole set, and prints each problem
         in the webhook's words. Other kinds are ignored (Namespaces give their labels).
default  prints the manifests as the mutating webhook would leave them.

Inputs: YAML or JSON files, directories (every *.yaml, *.yml, *.json below them), or - for
stdin (e.g. helm template ... | kaos-operator lint -). Multi-document streams and List
objects are read; Helm's "# Source:" comments name the template in the output. A
kaos-mcp-runtimes ConfigMap in the manifests (the chart's) is the registry MCPServers with
spec.runtime are judged against, a kaos-harness-runtimes one the registry of Agents'
spec.harness.runtime; with no registry at all, their runtime is only warned about.

Options:
  -n, --namespace <ns>        namespace of objects that name none (default "default")
      --reference-policy <p>  the operator-wide policy: Enforce (default) or Warn; a namespace
                              label or object annotation kaos.tools/reference-policy in the
                              set (or, with --cluster, in the cluster) overrides it
      --cluster               also resolve references against the cluster in KUBECONFIG
                              (read-only: lists the KAOS objects of the set's namespaces,
                              and reads the MCP runtime registry, ConfigMap kaos-mcp-runtimes
                              in POD_NAMESPACE, default kaos-system, and the harness runtime
                              registry, kaos-harness-runtimes in SYSTEM_NAMESPACE, default kaos)
      --runtimes <file>       the MCP runtime registry: a runtimes.yaml, or a file with the
                              kaos-mcp-runtimes ConfigMap (wins over the set's and the cluster's)
  -o, --output <format>       lint: text (default) or json; default: yaml (the only format)
  -h, --help                  this text

The operator's DEFAULT_* environment variables (images, model name, pod defaults) are read as
the operator reads them, so set them as your deployment does.

Exit codes: 0 no errors (warnings allowed), 1 errors, 2 the tool could not run (unreadable
file, broken YAML, unknown option, cluster unreachable with --cluster).

What only the cluster can check: spec.podSpec (with spec.container and valueFrom entries) is
checked offline against the structure of core/v1 PodSpec (field types, required fields, int32
ranges, quantity syntax) from the Kubernetes OpenAPI document; the webhook instead dry-runs
the Deployment, so Kubernetes' own pod rules (names and ports, unique containers, requests
within limits, securityContext combinations) are judged only there. Without --cluster, only
objects in the set exist; every object is judged as a create.
`;
