{{- define "kaos-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kaos-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "kaos-operator.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "kaos-operator.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "kaos-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kaos-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "kaos-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "kaos-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "kaos-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kaos-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "kaos-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- /* Where the serving certificate comes from: cert-manager, existing (the user's) or generated. */}}
{{- define "kaos-operator.certMode" -}}
{{- if .Values.certManager.enabled }}cert-manager
{{- else if .Values.webhooks.certificate.existingSecret }}existing
{{- else }}generated
{{- end }}
{{- end }}

{{- define "kaos-operator.webhookSecretName" -}}
{{- if eq (include "kaos-operator.certMode" .) "existing" }}
{{- .Values.webhooks.certificate.existingSecret }}
{{- else }}
{{- include "kaos-operator.fullname" . }}-webhook-tls
{{- end }}
{{- end }}

{{- /* The DNS names the API server uses for the webhook Service. */}}
{{- define "kaos-operator.webhookDnsNames" -}}
{{- $svc := printf "%s-webhook" (include "kaos-operator.fullname" .) }}
{{- $ns := .Release.Namespace }}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) | toJson }}
{{- end }}

{{- /*
The chart-generated CA and certificate, made once per render and cached in .Values (every
template sees the same map), so the Secret, the caBundle and the pod checksum agree. On upgrade
the Secret in the cluster is reused through `lookup` when it still holds all three keys, so the
certificate does not churn; `helm template` (Argo CD) has no cluster and generates anew.
*/}}
{{- define "kaos-operator.generatedTls" -}}
{{- if not (hasKey .Values "__generatedTls") }}
{{- $name := include "kaos-operator.webhookSecretName" . }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $name }}
{{- $tls := dict }}
{{- if and $existing $existing.data (hasKey $existing.data "tls.crt") (hasKey $existing.data "tls.key") (hasKey $existing.data "ca.crt") }}
{{- $tls = dict "crt" (index $existing.data "tls.crt") "key" (index $existing.data "tls.key") "ca" (index $existing.data "ca.crt") }}
{{- else }}
{{- $days := int .Values.webhooks.certificate.validityDays }}
{{- $ca := genCA (printf "%s-ca" (include "kaos-operator.fullname" .)) $days }}
{{- $dns := include "kaos-operator.webhookDnsNames" . | fromJsonArray }}
{{- $cert := genSignedCert (index $dns 2) nil $dns $days $ca }}
{{- $tls = dict "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc) "ca" ($ca.Cert | b64enc) }}
{{- end }}
{{- $_ := set .Values "__generatedTls" $tls }}
{{- end }}
{{- index .Values "__generatedTls" | toJson }}
{{- end }}

{{- /* The webhook configurations' templated parts (chart/generate.ts puts these includes in). */}}
{{- define "kaos-operator.webhook.labels" -}}
{{ .key }}:
  {{- include "kaos-operator.labels" .root | nindent 2 }}
  app.kubernetes.io/component: webhook
{{- end }}

{{- define "kaos-operator.webhook.annotations" -}}
{{- $root := .root }}
{{- if eq (include "kaos-operator.certMode" $root) "cert-manager" }}
{{ .key }}:
  cert-manager.io/inject-ca-from: {{ printf "%s/%s-webhook" $root.Release.Namespace (include "kaos-operator.fullname" $root) }}
{{- end }}
{{- end }}

{{- define "kaos-operator.webhook.caBundle" -}}
{{- $root := .root }}
{{- $mode := include "kaos-operator.certMode" $root }}
{{- if eq $mode "generated" }}
{{ .key }}: {{ (include "kaos-operator.generatedTls" $root | fromJson).ca }}
{{- else if eq $mode "existing" }}
{{- $ca := required "webhooks.certificate.caBundle is required with webhooks.certificate.existingSecret" $root.Values.webhooks.certificate.caBundle }}
{{ .key }}: {{ hasPrefix "-----BEGIN" (trim $ca) | ternary (b64enc (trim $ca)) (trim $ca) }}
{{- end }}
{{- end }}

{{- /*
Every namespace, the release namespace included: the webhooks match only kaos.tools objects, so
there is no bootstrap loop to break (the operator's pods and Secrets are never admitted by it),
and a KAOS object there (an AccessGrant beside the PDP) is validated like anywhere else. With
watchNamespaces, only those (the operator reads no other); no selector when nothing limits them.
*/}}
{{- define "kaos-operator.webhook.namespaceSelector" -}}
{{- $root := .root }}
{{- $expressions := list }}
{{- if $root.Values.watchNamespaces }}
{{- $expressions = append $expressions (dict "key" "kubernetes.io/metadata.name" "operator" "In" "values" $root.Values.watchNamespaces) }}
{{- end }}
{{- $expressions = concat $expressions $root.Values.webhooks.namespaceSelectorExpressions }}
{{- if $expressions }}
{{ .key }}:
  matchExpressions:
    {{- toYaml $expressions | nindent 4 }}
{{- end }}
{{- end }}
