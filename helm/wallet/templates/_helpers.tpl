{{/*
Names and labels.
*/}}
{{- define "wallet.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "wallet.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "wallet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "wallet.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "wallet.labels" -}}
{{ include "wallet.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: payments-wallet
{{- end -}}

{{/*
The product's processes: the facts that do not change per install (names, env prefixes, ports,
who calls whom). `key` is the values key; `callers` may reach its main port; `uses` what it
needs (postgres, redis, nats, ledger, sandbox, providers, smtp, internet, gateway).
Confirmed in code: each service's src/config.ts, gateway/src/config.ts, deploy/local/processes.mjs.
`adminPort` (gateway): the admin listener (/admin/* only; in production /admin is not on the main port).
`mesh`: part of the gRPC mesh (mutual TLS, identity spiffe://wallet/<name>; services/platform/src/mesh):
every process but the sandbox, which speaks plain HTTP like the real providers.
`uses: grpc`: a client of every mesh process that lists it in `callers` (the gateway; the reconciliation
reads the owning services' settled records and posts the ledger's clearing adjustments).
`uses: reports`: downloads the providers' daily settlement reports (the sandbox's
/sandbox/reports, or reconciliation.reports.* without it).
*/}}
{{- define "wallet.processTable" -}}
gateway:
  mesh: true
  key: gateway
  prefix: GATEWAY
  mainPort: { name: http, port: 8080, env: GATEWAY_PORT }
  adminPort: 8081
  opsPort: 9100
  stateless: true
  callers: []
  # nats: it publishes its outbox (company.security_changed); smtp: its mail outbox (issue 36).
  uses: [postgres, redis, grpc, nats, smtp]
ledger:
  mesh: true
  key: ledger
  prefix: LEDGER
  mainPort: { name: grpc, port: 50051, env: LEDGER_GRPC_PORT }
  opsPort: 9101
  stateless: true
  callers: [gateway, transfer, pse-deposit, collect-key, reconciliation]
  uses: [postgres, nats]
transfer:
  mesh: true
  key: transfer
  prefix: TRANSFER
  mainPort: { name: grpc, port: 50052, env: TRANSFER_GRPC_PORT }
  opsPort: 9102
  stateless: true
  callers: [gateway, reconciliation]
  uses: [postgres, nats, ledger, providers]
pse-deposit:
  mesh: true
  key: pseDeposit
  prefix: DEPOSIT
  mainPort: { name: grpc, port: 50053, env: DEPOSIT_GRPC_PORT }
  opsPort: 9103
  stateless: true
  callers: [gateway, reconciliation]
  # grpc: collect-key, for a cobro's dynamic Bre-B key (docs/cobros.md).
  uses: [postgres, nats, ledger, providers, smtp, grpc]
collect-key:
  mesh: true
  key: collectKey
  prefix: COLLECT_KEY
  mainPort: { name: grpc, port: 50054, env: COLLECT_KEY_GRPC_PORT }
  opsPort: 9104
  stateless: true
  callers: [gateway, reconciliation, pse-deposit]
  uses: [postgres, nats, ledger, providers]
receipt:
  mesh: true
  key: receipt
  prefix: RECEIPT
  mainPort: { name: grpc, port: 50055, env: RECEIPT_GRPC_PORT }
  opsPort: 9105
  stateless: true
  callers: [gateway]
  uses: [postgres, nats]
webhook:
  mesh: true
  key: webhook
  prefix: WEBHOOK
  mainPort: { name: grpc, port: 50056, env: WEBHOOK_GRPC_PORT }
  opsPort: 9106
  stateless: true
  callers: [gateway]
  uses: [postgres, nats, internet]
reconciliation:
  mesh: true
  key: reconciliation
  prefix: RECONCILIATION
  mainPort: { name: grpc, port: 50057, env: RECONCILIATION_GRPC_PORT }
  opsPort: 9107
  # RECON_WORK_DIR: an emptyDir of its own for the external sort's run files.
  workDir: /var/tmp/reconciliation
  # Its state (runs, breaks, the run lock) is in Postgres: any replica serves the API, and runs of
  # one (rail, date) are serialised by a lock, whichever replica starts them.
  stateless: true
  callers: [gateway]
  uses: [postgres, nats, grpc, reports]
sandbox:
  mesh: false
  key: sandbox
  prefix: SANDBOX
  mainPort: { name: http, port: 8090, env: SANDBOX_PORT }
  opsPort: 0
  smtpPort: 2525
  stateless: false
  callers: [transfer, pse-deposit, collect-key, reconciliation]
  uses: [postgres, gateway]
{{- end -}}

{{/* The processes enabled in this install: name → facts merged with their values. */}}
{{- define "wallet.processes" -}}
{{- $table := include "wallet.processTable" . | fromYaml -}}
{{- $out := dict -}}
{{- range $name, $p := $table -}}
{{- $v := index $.Values $p.key -}}
{{- if $v.enabled -}}
{{- $merged := mergeOverwrite (deepCopy $.Values.defaults) (deepCopy $v) -}}
{{- $_ := set $out $name (dict "name" $name "facts" $p "values" $merged) -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{- define "wallet.image" -}}
{{- printf "%s/%s:%s" .root.Values.image.repository .name (default .root.Chart.AppVersion .root.Values.image.tag) -}}
{{- end -}}

{{/* In-cluster address of a process's Service. */}}
{{- define "wallet.host" -}}
{{- printf "%s-%s" (include "wallet.fullname" .root) .name -}}
{{- end -}}

{{- define "wallet.sandboxUrl" -}}
{{- printf "http://%s:8090" (include "wallet.host" (dict "root" . "name" "sandbox")) -}}
{{- end -}}

{{/* The API's public base URL: gateway.publicUrl, else the first ingress host (https with TLS), else empty. */}}
{{- define "wallet.gatewayPublicUrl" -}}
{{- $ing := .Values.ingress -}}
{{- if .Values.gateway.publicUrl -}}{{ trimSuffix "/" .Values.gateway.publicUrl }}
{{- else if and $ing.enabled $ing.hosts -}}{{ printf "%s://%s" (ternary "https" "http" (gt (len $ing.tls) 0)) (index $ing.hosts 0).host }}
{{- end -}}
{{- end -}}

{{/* A provider URL: the value, else the sandbox when it is on, else a clear error. */}}
{{- define "wallet.providerUrl" -}}
{{- if .value -}}{{ .value }}
{{- else if .root.Values.sandbox.enabled -}}{{ include "wallet.sandboxUrl" .root }}
{{- else -}}{{ fail (printf "providers.%s is required when the sandbox is off" .field) }}
{{- end -}}
{{- end -}}

{{- define "wallet.publicBaseUrl" -}}
{{- if .Values.providers.publicBaseUrl -}}{{ trimSuffix "/" .Values.providers.publicBaseUrl }}
{{- else if .Values.sandbox.enabled -}}{{ printf "http://%s:8080" (include "wallet.host" (dict "root" . "name" "gateway")) }}
{{- else -}}{{ fail "providers.publicBaseUrl is required when the sandbox is off (providers call the gateway's /webhooks there)" }}
{{- end -}}
{{- end -}}

{{/* Base URL of the providers' settlement reports (RECON_REPORTS_URL): the value, else the sandbox's. */}}
{{- define "wallet.reportsUrl" -}}
{{- $url := .Values.reconciliation.reports.url -}}
{{- if $url -}}{{ trimSuffix "/" $url }}
{{- else if .Values.sandbox.enabled -}}{{ printf "%s/sandbox/reports" (include "wallet.sandboxUrl" .) }}
{{- else -}}{{ fail "reconciliation.reports.url is required when the sandbox is off (the providers' settlement reports: <url>/<rail>/<date>.csv)" }}
{{- end -}}
{{- end -}}

{{/*
A Kubernetes memory quantity (e.g. 512Mi, 1Gi, 800M, 536870912) in whole MiB, rounded down; fails
on anything else (a fraction, an unknown suffix), so a derived setting is never silently wrong.
*/}}
{{- define "wallet.memoryMiB" -}}
{{- $q := .quantity -}}
{{- /* A bare number of bytes arrives as a float64 from YAML and --set: written back as an integer. */ -}}
{{- if or (kindIs "float64" $q) (kindIs "int64" $q) (kindIs "int" $q) -}}{{- $q = printf "%d" (int64 $q) -}}{{- else -}}{{- $q = toString $q -}}{{- end -}}
{{- if not (regexMatch "^[0-9]+(Ki|Mi|Gi|Ti|k|M|G|T)?$" $q) -}}
{{- fail (printf "%s: %q is not a memory quantity this chart can derive from (use an integer with Ki, Mi, Gi, Ti, k, M, G, T or none)" .field $q) -}}
{{- end -}}
{{- $n := regexFind "^[0-9]+" $q | int64 -}}
{{- $unit := trimPrefix (regexFind "^[0-9]+" $q) $q -}}
{{- $bytes := dict "" 1 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 -}}
{{- div (mul $n (index $bytes $unit)) 1048576 -}}
{{- end -}}

{{/*
NODE_OPTIONS of a process with `heapPercent` set: V8's old space capped at that share of the
container's memory limit, so the process collects garbage before the kernel kills it (the rest: the
young generation, buffers, the runtime itself).
*/}}
{{- define "wallet.nodeOptions" -}}
{{- $limit := required (printf "%s.resources.limits.memory is required: its heap (--max-old-space-size) is derived from it" .key) (.values.resources.limits | default dict).memory -}}
{{- $mib := include "wallet.memoryMiB" (dict "quantity" $limit "field" (printf "%s.resources.limits.memory" .key)) | int64 -}}
{{- $heap := div (mul $mib (int64 .values.heapPercent)) 100 -}}
{{- if lt $heap 64 -}}{{ fail (printf "%s: a memory limit of %s leaves a heap of %d MiB; give it at least 128Mi" .key (toString $limit) $heap) }}{{- end -}}
--max-old-space-size={{ $heap }}
{{- end -}}

{{/*
Plain (non-secret) environment of one process, as a YAML map. Rendered into its ConfigMap and,
for the migrations Job (which runs before the ConfigMap exists), inline.
*/}}
{{- define "wallet.env" -}}
{{- $root := .root -}}
{{- $p := .process -}}
{{- $f := $p.facts -}}
{{- $c := $root.Values.config -}}
{{- $addr := dict -}}
{{- range $n := list "ledger" "transfer" "pse-deposit" "collect-key" "receipt" "webhook" "reconciliation" -}}
{{- $t := index (include "wallet.processTable" $root | fromYaml) $n -}}
{{- /* The headless peers Service (services.yaml): every pod's address, balanced round robin by the client. */ -}}
{{- $_ := set $addr $n (printf "dns:///%s-grpc:%v" (include "wallet.host" (dict "root" $root "name" $n)) $t.mainPort.port) -}}
{{- end -}}
NODE_ENV: {{ $c.nodeEnv | quote }}
LOG_LEVEL: {{ $c.logLevel | quote }}
NATS_URL: {{ $root.Values.nats.url | quote }}
NATS_STREAM_REPLICAS: {{ $root.Values.nats.streamReplicas | quote }}
BUS_NAMESPACE: {{ $c.busNamespace | quote }}
OTEL_SERVICE_NAME: {{ $p.name | quote }}
{{- if $c.otlpEndpoint }}
OTEL_EXPORTER_OTLP_ENDPOINT: {{ $c.otlpEndpoint | quote }}
{{- end }}
{{ $f.mainPort.env }}: {{ $f.mainPort.port | quote }}
{{ $f.prefix }}_MIGRATE_ON_START: {{ ternary "false" "true" $root.Values.migrations.enabled | quote }}
{{- if $f.opsPort }}
{{ $f.prefix }}_OPS_PORT: {{ $f.opsPort | quote }}
{{- end }}
{{- if eq $p.name "gateway" }}
GATEWAY_HOST: "0.0.0.0"
GATEWAY_ADMIN_PORT: {{ $f.adminPort | quote }}
LEDGER_GRPC_ADDR: {{ index $addr "ledger" | quote }}
TRANSFER_GRPC_ADDR: {{ index $addr "transfer" | quote }}
DEPOSIT_GRPC_ADDR: {{ index $addr "pse-deposit" | quote }}
COLLECT_KEY_GRPC_ADDR: {{ index $addr "collect-key" | quote }}
RECEIPT_GRPC_ADDR: {{ index $addr "receipt" | quote }}
WEBHOOK_GRPC_ADDR: {{ index $addr "webhook" | quote }}
RECONCILIATION_GRPC_ADDR: {{ index $addr "reconciliation" | quote }}
TRUSTED_PROXIES: {{ $p.values.trustedProxies | quote }}
MAIL_FROM: {{ $p.values.mailFrom | quote }}
{{- with include "wallet.gatewayPublicUrl" $root }}
GATEWAY_PUBLIC_URL: {{ . | quote }}
{{- end }}
{{- else if eq $p.name "sandbox" }}
SANDBOX_HOST: "0.0.0.0"
SANDBOX_SMTP_HOST: "0.0.0.0"
SANDBOX_SMTP_PORT: {{ $f.smtpPort | quote }}
SANDBOX_PUBLIC_URL: {{ default (include "wallet.sandboxUrl" $root) $p.values.publicUrl | quote }}
{{- else }}
{{ $f.prefix }}_GRPC_HOST: "0.0.0.0"
{{- end }}
{{- if has "ledger" $f.uses }}
LEDGER_GRPC_ADDR: {{ index $addr "ledger" | quote }}
{{- end }}
{{- $pv := $root.Values.providers -}}
{{- if eq $p.name "transfer" }}
BREB_DIRECTORY_URL: {{ include "wallet.providerUrl" (dict "root" $root "value" $pv.brebDirectoryUrl "field" "brebDirectoryUrl") | quote }}
BREB_RAIL_URL: {{ include "wallet.providerUrl" (dict "root" $root "value" $pv.brebRailUrl "field" "brebRailUrl") | quote }}
ACH_RAIL_URL: {{ include "wallet.providerUrl" (dict "root" $root "value" $pv.achRailUrl "field" "achRailUrl") | quote }}
RAIL_CALLBACK_BASE_URL: {{ printf "%s/webhooks/rails" (include "wallet.publicBaseUrl" $root) | quote }}
{{- else if eq $p.name "pse-deposit" }}
COLLECT_KEY_GRPC_ADDR: {{ index $addr "collect-key" | quote }}
PSE_PROVIDER_URL: {{ include "wallet.providerUrl" (dict "root" $root "value" $pv.pseProviderUrl "field" "pseProviderUrl") | quote }}
PSE_CALLBACK_URL: {{ printf "%s/webhooks/pse" (include "wallet.publicBaseUrl" $root) | quote }}
{{- else if eq $p.name "collect-key" }}
BREB_DIRECTORY_URL: {{ include "wallet.providerUrl" (dict "root" $root "value" $pv.brebDirectoryUrl "field" "brebDirectoryUrl") | quote }}
BREB_INCOMING_CALLBACK_URL: {{ printf "%s/webhooks/breb/incoming" (include "wallet.publicBaseUrl" $root) | quote }}
{{- else if eq $p.name "receipt" }}
{{- if $p.values.verifyBaseUrl }}
RECEIPT_VERIFY_BASE_URL: {{ trimSuffix "/" $p.values.verifyBaseUrl | quote }}
{{- else }}
{{- with include "wallet.gatewayPublicUrl" $root }}
RECEIPT_VERIFY_BASE_URL: {{ printf "%s/receipts/verify" . | quote }}
{{- end }}
{{- end }}
{{- else if eq $p.name "reconciliation" }}
TRANSFER_GRPC_ADDR: {{ index $addr "transfer" | quote }}
DEPOSIT_GRPC_ADDR: {{ index $addr "pse-deposit" | quote }}
COLLECT_KEY_GRPC_ADDR: {{ index $addr "collect-key" | quote }}
LEDGER_GRPC_ADDR: {{ index $addr "ledger" | quote }}
RECON_REPORTS_URL: {{ include "wallet.reportsUrl" $root | quote }}
RECON_SCHEDULE: {{ $p.values.schedule | quote }}
RECON_TIMEZONE: {{ $p.values.timezone | quote }}
{{- with $p.values.rails }}
RECON_RAILS: {{ join "," . | quote }}
{{- end }}
{{- end }}
{{- range $k, $v := $p.values.env }}
{{ $k }}: {{ $v | quote }}
{{- end }}
{{- end -}}

{{/*
Secret groups: name of the Secret each group is read from (yours, or the one the chart makes).
*/}}
{{- define "wallet.secretName" -}}
{{- $g := dict -}}
{{- if hasPrefix "db-" .group -}}{{- $g = index .root.Values.secrets.databases (trimPrefix "db-" .group) -}}{{- else -}}{{- $g = index .root.Values.secrets .group -}}{{- end -}}
{{- if $g.existingSecret -}}{{ $g.existingSecret }}{{- else -}}{{ printf "%s-%s-secrets" (include "wallet.fullname" .root) .group }}{{- end -}}
{{- end -}}

{{/* Secret variables of one process: [env name, group, key in the Secret]. */}}
{{- define "wallet.secretEnvTable" -}}
gateway: [[ADMIN_TOKEN, admin, ADMIN_TOKEN], [API_KEY_PEPPER, admin, API_KEY_PEPPER], [GATEWAY_ENCRYPTION_KEY, admin, GATEWAY_ENCRYPTION_KEY], [DATABASE_URL, db-gateway, DATABASE_URL], [REDIS_URL, database, REDIS_URL], [SMTP_URL, providers, SMTP_URL]]
ledger: [[DATABASE_URL, db-ledger, DATABASE_URL]]
transfer: [[DATABASE_URL, db-transfer, DATABASE_URL], [RAIL_CALLBACK_SECRET, providers, RAIL_CALLBACK_SECRET], [TRANSFER_DATA_KEY, transfer, TRANSFER_DATA_KEY]]
pse-deposit: [[DATABASE_URL, db-pse-deposit, DATABASE_URL], [PSE_CALLBACK_SECRET, providers, PSE_CALLBACK_SECRET], [SMTP_URL, providers, SMTP_URL]]
collect-key: [[DATABASE_URL, db-collect-key, DATABASE_URL], [BREB_CALLBACK_SECRET, providers, BREB_CALLBACK_SECRET]]
receipt: [[DATABASE_URL, db-receipt, DATABASE_URL]]
webhook: [[DATABASE_URL, db-webhook, DATABASE_URL], [WEBHOOK_SECRET_KEY, webhook, WEBHOOK_SECRET_KEY]]
reconciliation: [[DATABASE_URL, db-reconciliation, DATABASE_URL], [RECON_REPORTS_TOKEN, reconciliation, RECON_REPORTS_TOKEN]]
sandbox: [[DATABASE_URL, db-sandbox, DATABASE_URL], [SANDBOX_CALLBACK_SECRET, providers, RAIL_CALLBACK_SECRET]]
{{- end -}}

{{- define "wallet.secretEnv" -}}
{{- $rows := index (include "wallet.secretEnvTable" .root | fromYaml) .process.name -}}
{{- range $row := $rows }}
{{- /* The migration Jobs connect as the migrations role (group `database`); the processes as their own. */}}
{{- $group := ternary "database" (index $row 1) (and (eq (toString (default false $.migrations)) "true") (eq (index $row 0) "DATABASE_URL")) }}
- name: {{ index $row 0 }}
  valueFrom:
    secretKeyRef:
      name: {{ include "wallet.secretName" (dict "root" $.root "group" $group) }}
      key: {{ index $row 2 }}
      optional: {{ ne (index $row 0) "DATABASE_URL" }}
{{- end }}
{{- /* The receipts' signing key: the service only (its migrations Job signs nothing). */}}
{{- if and (eq .process.name "receipt") (not $.migrations) (include "wallet.receiptSigningSecret" .root) }}
- name: RECEIPT_SIGNING_P12_FILE
  value: {{ include "wallet.receiptSigningFile" .root | quote }}
- name: RECEIPT_SIGNING_P12_PASSPHRASE
  valueFrom:
    secretKeyRef:
      name: {{ include "wallet.receiptSigningSecret" .root }}
      key: {{ .root.Values.receipt.signing.passphraseKey }}
{{- end }}
{{- range $e := .process.values.secretEnv }}
- name: {{ $e.name }}
  valueFrom:
    secretKeyRef:
      name: {{ $e.secretName }}
      key: {{ $e.key }}
{{- end }}
{{- end -}}

{{/*
The receipts' signing key (PAdES): the Secret named in receipt.signing.existingSecret (the PKCS#12 and
its passphrase; never made by the chart), mounted read-only into the receipt pods. Without one the
service makes a development key at start, which production must not do: the chart stops there.
*/}}
{{- define "wallet.receiptSigningSecret" -}}
{{- $s := (.Values.receipt.signing | default dict).existingSecret -}}
{{- if and (not $s) (eq .Values.config.nodeEnv "production") .Values.receipt.enabled -}}
{{- fail "receipt.signing.existingSecret is required with config.nodeEnv production: a Secret with the PKCS#12 receipts are signed with and its passphrase (see helm/README.md, \"Receipt signing\")" -}}
{{- end -}}
{{- $s -}}
{{- end -}}
{{- define "wallet.receiptSigningDir" -}}/var/run/wallet/receipt-signing{{- end -}}
{{- define "wallet.receiptSigningFile" -}}{{ include "wallet.receiptSigningDir" . }}/receipt-signing.p12{{- end -}}

{{- define "wallet.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "wallet.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: ["ALL"]
{{- end -}}

{{- define "wallet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ default (include "wallet.fullname" .) .Values.serviceAccount.name }}{{- else -}}{{ default "default" .Values.serviceAccount.name }}{{- end -}}
{{- end -}}

{{/*
The gRPC mesh (services/platform/src/mesh): every process but the sandbox holds a certificate whose
URI SAN `spiffe://wallet/<identity>` is its identity, and reads it from MESH_TLS_DIR (ca.crt,
tls.crt, tls.key: the keys of a cert-manager Certificate's Secret). The gateway signs a caller
context (Ed25519) that every gRPC service verifies with its public key.
*/}}
{{- define "wallet.meshTlsDir" -}}/var/run/wallet/mesh{{- end -}}
{{- define "wallet.callerContextDir" -}}/var/run/wallet/caller-context{{- end -}}

{{/* The certificates' source, checked: certManager or existingSecrets. */}}
{{- define "wallet.meshMode" -}}
{{- $mode := .Values.mesh.certificates.mode -}}
{{- if not (has $mode (list "certManager" "existingSecrets")) -}}
{{- fail (printf "mesh.certificates.mode must be certManager or existingSecrets (got %q)" (toString $mode)) -}}
{{- end -}}
{{- $mode -}}
{{- end -}}

{{/* The Secret holding ca.crt/tls.crt/tls.key of one mesh identity (dict root, identity). */}}
{{- define "wallet.meshSecretName" -}}
{{- $default := printf "%s-mesh-%s" (include "wallet.fullname" .root) .identity -}}
{{- if eq (include "wallet.meshMode" .root) "existingSecrets" -}}
{{- default $default (index (.root.Values.mesh.certificates.existingSecrets | default dict) .identity) -}}
{{- else -}}
{{- $default -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding public.pem (and private.pem, for the gateway only) of the caller context. */}}
{{- define "wallet.callerContextSecretName" -}}
{{- default (printf "%s-caller-context" (include "wallet.fullname" .)) .Values.mesh.callerContext.existingSecret -}}
{{- end -}}

{{/* issuerRef of the mesh Certificates, required in certManager mode. */}}
{{- define "wallet.meshIssuerRef" -}}
{{- $ref := .Values.mesh.certificates.issuerRef | default dict -}}
{{- $name := required "mesh.certificates.issuerRef.name is required with mesh.certificates.mode=certManager: name a cert-manager CA issuer of the mesh CA (an Issuer or ClusterIssuer with spec.ca; see helm/README.md, \"Service mesh\"), or use mode existingSecrets" $ref.name -}}
{{- $kind := default "Issuer" $ref.kind -}}
{{- $group := default "cert-manager.io" $ref.group -}}
{{- if and (eq $group "cert-manager.io") (not (has $kind (list "Issuer" "ClusterIssuer"))) -}}
{{- fail (printf "mesh.certificates.issuerRef.kind must be Issuer or ClusterIssuer (got %q)" $kind) -}}
{{- end -}}
name: {{ $name }}
kind: {{ $kind }}
group: {{ $group }}
{{- end -}}

{{/* In-cluster DNS names of a process's Service (dict root, name). */}}
{{- define "wallet.serviceDnsNames" -}}
{{- $host := include "wallet.host" (dict "root" .root "name" .name) -}}
{{- $ns := .root.Release.Namespace -}}
- {{ $host }}
- {{ $host }}.{{ $ns }}
- {{ $host }}.{{ $ns }}.svc
- {{ $host }}.{{ $ns }}.svc.{{ .root.Values.mesh.certificates.clusterDomain | default "cluster.local" }}
{{- end -}}
