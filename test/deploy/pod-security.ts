/**
 * Kubernetes' "restricted" Pod Security Standard as a check of a pod spec: what the built-in
 * Pod Security admission would refuse in a namespace labelled
 * `pod-security.kubernetes.io/enforce: restricted`. Written from the standard's own list of
 * controls (https://kubernetes.io/docs/concepts/security/pod-security-standards/, "Baseline"
 * then "Restricted"; the restricted profile includes every baseline control). No cluster runs
 * here, so the deploy tests read the manifests through it.
 *
 * Returns the violations, one sentence each naming the field; none means the pod is admitted.
 */

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === "object" ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);

/** Baseline "Capabilities": what may be added at all (restricted narrows it to one). */
const RESTRICTED_ADDABLE = ["NET_BIND_SERVICE"];

/** Restricted "Volume Types": the only volume sources allowed (everything else, hostPath first, is refused). */
const ALLOWED_VOLUMES = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
];

/** Baseline "Sysctls": the safe, namespaced set. */
const SAFE_SYSCTLS = [
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
];

/** Baseline "SELinux": the only types a pod may ask for. */
const SELINUX_TYPES = [
  "",
  "container_t",
  "container_init_t",
  "container_kvm_t",
  "container_engine_t",
];

const PROBES = ["livenessProbe", "readinessProbe", "startupProbe"];
const HOOKS = ["postStart", "preStop"];

/** Every container of the pod (init and ephemeral ones too), with where it is. */
function containersOf(spec: Obj): { where: string; c: Obj }[] {
  return ["containers", "initContainers", "ephemeralContainers"].flatMap((kind) =>
    list(spec[kind]).map((c, i) => ({ where: `spec.${kind}[${i}]`, c })),
  );
}

export function restrictedViolations(spec: Obj, metadata: Obj = {}): string[] {
  return [...baselineViolations(spec, metadata), ...restrictedOnly(spec)];
}

function baselineViolations(spec: Obj, metadata: Obj): string[] {
  const found: string[] = [];
  const pod = obj(spec.securityContext);
  // Host Namespaces; HostProcess.
  for (const field of ["hostNetwork", "hostPID", "hostIPC"]) {
    if (spec[field] === true) found.push(`spec.${field} must be false`);
  }
  if (obj(pod.windowsOptions).hostProcess === true) found.push("HostProcess pods are refused");
  // Sysctls.
  for (const s of list(pod.sysctls)) {
    if (!SAFE_SYSCTLS.includes(String(s.name))) found.push(`sysctl ${String(s.name)} is not safe`);
  }
  found.push(...seLinuxAndAppArmor("spec.securityContext", pod));
  // AppArmor, the annotation form.
  for (const [key, value] of Object.entries(obj(metadata.annotations))) {
    if (
      key.startsWith("container.apparmor.security.beta.kubernetes.io/") &&
      value !== "runtime/default" &&
      !String(value).startsWith("localhost/")
    ) {
      found.push(`annotation ${key} must be runtime/default or localhost/*`);
    }
  }
  for (const { where, c } of containersOf(spec)) {
    const sc = obj(c.securityContext);
    if (sc.privileged === true) found.push(`${where}: privileged containers are refused`);
    if (obj(sc.windowsOptions).hostProcess === true) found.push(`${where}: HostProcess`);
    if (sc.procMount !== undefined && sc.procMount !== "Default") {
      found.push(`${where}: procMount must be Default`);
    }
    found.push(...seLinuxAndAppArmor(`${where}.securityContext`, sc));
    // Host Ports.
    for (const p of list(c.ports)) {
      if (p.hostPort !== undefined && p.hostPort !== 0) found.push(`${where}: hostPort is refused`);
    }
    // Host Probes / Lifecycle Hooks: no `host` (the kubelet would connect to another machine).
    const handlers = [
      ...PROBES.map((name) => [name, obj(c[name])] as const),
      ...HOOKS.map((name) => [`lifecycle.${name}`, obj(obj(c.lifecycle)[name])] as const),
    ];
    for (const [name, handler] of handlers) {
      for (const action of ["httpGet", "tcpSocket"]) {
        const host = obj(handler[action]).host;
        if (host !== undefined && host !== "")
          found.push(`${where}.${name}.${action}.host is refused`);
      }
    }
  }
  return found;
}

function seLinuxAndAppArmor(where: string, sc: Obj): string[] {
  const found: string[] = [];
  const se = obj(sc.seLinuxOptions);
  if (se.type !== undefined && !SELINUX_TYPES.includes(String(se.type))) {
    found.push(`${where}.seLinuxOptions.type ${String(se.type)} is refused`);
  }
  if (se.user !== undefined || se.role !== undefined) {
    found.push(`${where}.seLinuxOptions user and role must not be set`);
  }
  const appArmor = obj(sc.appArmorProfile).type;
  if (appArmor !== undefined && appArmor !== "RuntimeDefault" && appArmor !== "Localhost") {
    found.push(`${where}.appArmorProfile.type must be RuntimeDefault or Localhost`);
  }
  return found;
}

function restrictedOnly(spec: Obj): string[] {
  const found: string[] = [];
  const pod = obj(spec.securityContext);
  // Volume Types.
  for (const v of list(spec.volumes)) {
    const sources = Object.keys(v).filter((k) => k !== "name");
    if (!sources.every((s) => ALLOWED_VOLUMES.includes(s))) {
      found.push(`volume ${String(v.name)} uses ${sources.join(", ")}, not an allowed type`);
    }
  }
  const seccomp = (sc: Obj) => obj(sc.seccompProfile).type;
  const goodSeccomp = (type: unknown) => type === "RuntimeDefault" || type === "Localhost";
  if (pod.runAsUser === 0) found.push("spec.securityContext.runAsUser must not be 0");
  if (seccomp(pod) !== undefined && !goodSeccomp(seccomp(pod))) {
    found.push("spec.securityContext.seccompProfile.type must be RuntimeDefault or Localhost");
  }
  for (const { where, c } of containersOf(spec)) {
    const sc = obj(c.securityContext);
    // Privilege Escalation: explicitly false.
    if (sc.allowPrivilegeEscalation !== false) {
      found.push(`${where}: securityContext.allowPrivilegeEscalation must be false`);
    }
    // Running as Non-root: the pod's runAsNonRoot, or the container's, and never false here.
    if (sc.runAsNonRoot === false || (pod.runAsNonRoot !== true && sc.runAsNonRoot !== true)) {
      found.push(`${where}: runAsNonRoot must be true (on the pod or the container)`);
    }
    // Running as Non-root user.
    if (sc.runAsUser === 0) found.push(`${where}: runAsUser must not be 0`);
    // Seccomp: RuntimeDefault or Localhost, on the pod or on every container.
    const type = seccomp(sc) ?? seccomp(pod);
    if (!goodSeccomp(type)) {
      found.push(`${where}: seccompProfile.type must be RuntimeDefault or Localhost`);
    }
    // Capabilities: drop ALL; add NET_BIND_SERVICE at most.
    const caps = obj(sc.capabilities);
    if (!(Array.isArray(caps.drop) && caps.drop.includes("ALL"))) {
      found.push(`${where}: securityContext.capabilities.drop must include ALL`);
    }
    for (const added of Array.isArray(caps.add) ? caps.add : []) {
      if (!RESTRICTED_ADDABLE.includes(String(added))) {
        found.push(`${where}: capability ${String(added)} may not be added`);
      }
    }
  }
  return found;
}
