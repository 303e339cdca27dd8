package policies_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// generate makes n Pods that vary every field a Pod Security check reads.
// Each starts restricted-compliant, then gets up to four random changes
// (a field set, unset, or set to an allowed or forbidden value, on the Pod or
// on a container of any list), so that allowed and denied Pods both occur
// and changes combine across controls.
func generate(t testing.TB, n int, seed uint64) []pod {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x70d5ec))
	pods := make([]pod, 0, n)
	for i := range n {
		p := compliant(fmt.Sprintf("gen-%d-%d", seed, i), r)
		for range r.IntN(5) {
			mutations[r.IntN(len(mutations))](r, p)
		}
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, pod{name: p.Name, obj: defaultedPod(t, p.Name, js), json: js})
	}
	return pods
}

// compliant is a Pod the restricted level allows, with one to three
// containers in random lists.
func compliant(name string, r *rand.Rand) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}},
	}
	c := func(n string) corev1.Container {
		return corev1.Container{Name: n, Image: "registry.k8s.io/pause", SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		}}
	}
	p.Spec.Containers = []corev1.Container{c("app")}
	if r.IntN(3) == 0 {
		p.Spec.InitContainers = []corev1.Container{c("init")}
	}
	if r.IntN(4) == 0 {
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon(c("debug"))}}
	}
	return p
}

// container picks a container of any list (ephemeral ones are the same
// struct underneath).
func container(r *rand.Rand, p *corev1.Pod) *corev1.Container {
	all := []*corev1.Container{}
	for i := range p.Spec.InitContainers {
		all = append(all, &p.Spec.InitContainers[i])
	}
	for i := range p.Spec.Containers {
		all = append(all, &p.Spec.Containers[i])
	}
	for i := range p.Spec.EphemeralContainers {
		all = append(all, (*corev1.Container)(&p.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	return all[r.IntN(len(all))]
}

func sc(c *corev1.Container) *corev1.SecurityContext {
	if c.SecurityContext == nil {
		c.SecurityContext = &corev1.SecurityContext{}
	}
	return c.SecurityContext
}

func psc(p *corev1.Pod) *corev1.PodSecurityContext {
	if p.Spec.SecurityContext == nil {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	return p.Spec.SecurityContext
}

func pick[T any](r *rand.Rand, values ...T) T { return values[r.IntN(len(values))] }

func optBool(r *rand.Rand) *bool { return pick(r, nil, ptr.To(true), ptr.To(false)) }

var seccompTypes = []corev1.SeccompProfileType{"RuntimeDefault", "Localhost", "Unconfined", ""}

func seccomp(r *rand.Rand) *corev1.SeccompProfile {
	if r.IntN(4) == 0 {
		return nil
	}
	return &corev1.SeccompProfile{Type: pick(r, seccompTypes...)}
}

func appArmor(r *rand.Rand) *corev1.AppArmorProfile {
	if r.IntN(4) == 0 {
		return nil
	}
	return &corev1.AppArmorProfile{Type: pick[corev1.AppArmorProfileType](r, "RuntimeDefault", "Localhost", "Unconfined", "")}
}

func seLinux(r *rand.Rand) *corev1.SELinuxOptions {
	if r.IntN(4) == 0 {
		return nil
	}
	return &corev1.SELinuxOptions{
		Type:  pick(r, "", "container_t", "container_init_t", "container_kvm_t", "container_engine_t", "spc_t", "unconfined_t"),
		User:  pick(r, "", "", "", "system_u"),
		Role:  pick(r, "", "", "", "system_r"),
		Level: pick(r, "", "s0:c123,c456"),
	}
}

func handler(r *rand.Rand) (host string, http bool) {
	return pick(r, "", "", "10.0.0.1", "localhost"), r.IntN(2) == 0
}

func probe(r *rand.Rand) *corev1.Probe {
	if r.IntN(3) == 0 {
		return nil
	}
	host, http := handler(r)
	if http {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: host, Path: "/healthz"}}}
	}
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: host}}}
}

func lifecycleHandler(r *rand.Rand) *corev1.LifecycleHandler {
	if r.IntN(3) == 0 {
		return nil
	}
	host, http := handler(r)
	if http {
		return &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: host, Path: "/hook"}}
	}
	return &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Host: host}}
}

func volume(r *rand.Rand, i int) corev1.Volume {
	v := corev1.Volume{Name: fmt.Sprintf("vol%d", i)}
	switch r.IntN(12) {
	case 0:
		v.HostPath = &corev1.HostPathVolumeSource{Path: "/var/log"}
	case 1:
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	case 2:
		v.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}
	case 3:
		v.Secret = &corev1.SecretVolumeSource{SecretName: "s"}
	case 4:
		v.NFS = &corev1.NFSVolumeSource{Server: "nfs", Path: "/"}
	case 5:
		v.Projected = &corev1.ProjectedVolumeSource{}
	case 6:
		v.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}
	case 7:
		v.GitRepo = &corev1.GitRepoVolumeSource{Repository: "r"}
	case 8:
		v.CSI = &corev1.CSIVolumeSource{Driver: "d"}
	case 9:
		v.Image = &corev1.ImageVolumeSource{Reference: "registry.k8s.io/pause"}
	case 10:
		v.DownwardAPI = &corev1.DownwardAPIVolumeSource{}
	default:
		v.ISCSI = &corev1.ISCSIVolumeSource{TargetPortal: "t", IQN: "i"}
	}
	return v
}

var sysctlNames = []string{
	"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
	"net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem", "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat",
	"kernel.msgmax", "net.core.somaxconn", "vm.overcommit_memory", "net.ipv4.ip_forward",
}

var capabilityNames = []corev1.Capability{"NET_BIND_SERVICE", "CHOWN", "KILL", "SYS_ADMIN", "NET_RAW", "ALL", "SYS_TIME", "AUDIT_WRITE"}

func capabilities(r *rand.Rand, n int) []corev1.Capability {
	var out []corev1.Capability
	for range n {
		out = append(out, pick(r, capabilityNames...))
	}
	return out
}

// mutations change one security-relevant field each.
var mutations = []func(*rand.Rand, *corev1.Pod){
	func(r *rand.Rand, p *corev1.Pod) { sc(container(r, p)).Privileged = optBool(r) },
	func(r *rand.Rand, p *corev1.Pod) { sc(container(r, p)).AllowPrivilegeEscalation = optBool(r) },
	func(r *rand.Rand, p *corev1.Pod) { sc(container(r, p)).RunAsNonRoot = optBool(r) },
	func(r *rand.Rand, p *corev1.Pod) { psc(p).RunAsNonRoot = optBool(r) },
	func(r *rand.Rand, p *corev1.Pod) {
		sc(container(r, p)).RunAsUser = pick(r, nil, ptr.To[int64](0), ptr.To[int64](1000))
	},
	func(r *rand.Rand, p *corev1.Pod) {
		psc(p).RunAsUser = pick(r, nil, ptr.To[int64](0), ptr.To[int64](1000))
	},
	func(r *rand.Rand, p *corev1.Pod) { sc(container(r, p)).SeccompProfile = seccomp(r) },
	func(r *rand.Rand, p *corev1.Pod) { psc(p).SeccompProfile = seccomp(r) },
	func(r *rand.Rand, p *corev1.Pod) { sc(container(r, p)).AppArmorProfile = appArmor(r) },
	func(r *rand.Rand, p *corev1.Pod) { psc(p).AppArmorProfile = appArmor(r) },
	func(r *rand.Rand, p *corev1.Pod) { sc(container(r, p)).SELinuxOptions = seLinux(r) },
	func(r *rand.Rand, p *corev1.Pod) { psc(p).SELinuxOptions = seLinux(r) },
	func(r *rand.Rand, p *corev1.Pod) {
		sc(container(r, p)).ProcMount = pick(r, nil, ptr.To(corev1.DefaultProcMount), ptr.To(corev1.UnmaskedProcMount))
	},
	func(r *rand.Rand, p *corev1.Pod) {
		c := sc(container(r, p))
		switch r.IntN(4) {
		case 0:
			c.Capabilities = nil
		case 1:
			c.Capabilities = &corev1.Capabilities{Add: capabilities(r, 1+r.IntN(2))}
		default:
			c.Capabilities = &corev1.Capabilities{Add: capabilities(r, r.IntN(2)), Drop: capabilities(r, r.IntN(3))}
		}
	},
	func(r *rand.Rand, p *corev1.Pod) {
		c := container(r, p)
		c.Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: pick[int32](r, 0, 80, 8080)}}
	},
	func(r *rand.Rand, p *corev1.Pod) {
		c := sc(container(r, p))
		c.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: optBool(r)}
	},
	func(r *rand.Rand, p *corev1.Pod) {
		psc(p).WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: optBool(r)}
	},
	func(r *rand.Rand, p *corev1.Pod) {
		p.Spec.OS = pick(r, nil, &corev1.PodOS{Name: corev1.Linux}, &corev1.PodOS{Name: corev1.Windows})
	},
	func(r *rand.Rand, p *corev1.Pod) { p.Spec.HostUsers = optBool(r) },
	func(r *rand.Rand, p *corev1.Pod) {
		switch r.IntN(3) {
		case 0:
			p.Spec.HostNetwork = r.IntN(2) == 0
		case 1:
			p.Spec.HostPID = r.IntN(2) == 0
		default:
			p.Spec.HostIPC = r.IntN(2) == 0
		}
	},
	func(r *rand.Rand, p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, volume(r, len(p.Spec.Volumes)))
	},
	func(r *rand.Rand, p *corev1.Pod) {
		psc(p).Sysctls = append(psc(p).Sysctls, corev1.Sysctl{Name: pick(r, sysctlNames...), Value: "1"})
	},
	func(r *rand.Rand, p *corev1.Pod) {
		c := container(r, p)
		c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = probe(r), probe(r), probe(r)
	},
	func(r *rand.Rand, p *corev1.Pod) {
		c := container(r, p)
		c.Lifecycle = &corev1.Lifecycle{PostStart: lifecycleHandler(r), PreStop: lifecycleHandler(r)}
	},
	func(r *rand.Rand, p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		key := pick(r, "container.apparmor.security.beta.kubernetes.io/", "container.seccomp.security.alpha.kubernetes.io/", "seccomp.security.alpha.kubernetes.io/pod")
		if key != "seccomp.security.alpha.kubernetes.io/pod" {
			key += container(r, p).Name
		}
		p.Annotations[key] = pick(r, "runtime/default", "localhost/profile", "unconfined", "", "docker/default")
	},
}
