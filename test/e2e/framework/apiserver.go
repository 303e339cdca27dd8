//go:build e2e

package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// APIServer stops and starts again the kube-apiserver of a control plane,
// with the same flags, port, certificates and etcd: the apiserver going away
// and coming back, as in an upgrade or a crash. (envtest's own restart makes
// new certificates, which no client started before would trust.)
type APIServer struct {
	path    string
	args    []string
	logFile string
	cmd     *exec.Cmd // the process this helper started, if any
	exited  chan struct{}
	pid     int
}

// FindAPIServer finds the kube-apiserver envtest started, by its binary and
// secure port, and reads its command line.
func FindAPIServer(env *envtest.Environment, logFile string) (*APIServer, error) {
	api := env.ControlPlane.APIServer
	if api == nil || api.SecureServing.Port == "" {
		return nil, errors.New("the control plane has no started apiserver")
	}
	// The port envtest passed to the apiserver as --secure-port, as it wrote it.
	port := "--secure-port=" + api.SecureServing.Port
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return nil, err
	}
	for _, p := range procs {
		raw, err := os.ReadFile(p)
		if err != nil || len(raw) == 0 {
			continue
		}
		argv := bytes.Split(bytes.TrimRight(raw, "\x00"), []byte{0})
		if string(argv[0]) != api.Path {
			continue
		}
		args := make([]string, 0, len(argv)-1)
		found := false
		for _, a := range argv[1:] {
			args = append(args, string(a))
			found = found || string(a) == port
		}
		if !found {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		return &APIServer{path: api.Path, args: args, logFile: logFile, pid: pid}, nil
	}
	return nil, fmt.Errorf("no process of %s with %s", api.Path, port)
}

// Stop sends SIGTERM and waits until the process is gone; after grace it
// kills it, as a crash would. It says which it was.
func (a *APIServer) Stop(grace time.Duration) (string, error) {
	start := time.Now()
	if err := syscall.Kill(a.pid, syscall.SIGTERM); err != nil {
		return "", fmt.Errorf("signal kube-apiserver %d: %w", a.pid, err)
	}
	killed := false
	for !a.exitedNow() {
		if !killed && time.Since(start) > grace {
			_ = syscall.Kill(a.pid, syscall.SIGKILL)
			killed = true
		}
		if time.Since(start) > grace+30*time.Second {
			return "", fmt.Errorf("kube-apiserver %d still running after SIGKILL", a.pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if killed {
		return fmt.Sprintf("killed (SIGKILL) after %v of SIGTERM", grace), nil
	}
	return fmt.Sprintf("stopped by SIGTERM in %v", time.Since(start).Round(10*time.Millisecond)), nil
}

func (a *APIServer) exitedNow() bool {
	if a.cmd == nil {
		return gone(a.pid)
	}
	select {
	case <-a.exited:
		return true
	default:
		return false
	}
}

// Start runs the apiserver again with the same command line and waits
// until it answers /readyz.
func (a *APIServer) Start(client kubernetes.Interface, timeout time.Duration) error {
	logf, err := os.OpenFile(a.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	a.cmd = exec.Command(a.path, a.args...)
	a.cmd.Stdout, a.cmd.Stderr = logf, logf
	if err := a.cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	a.pid = a.cmd.Process.Pid
	a.exited = make(chan struct{})
	exited, cmd := a.exited, a.cmd
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err == nil && string(body) == "ok" {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("kube-apiserver exited while starting; see %s", a.logFile)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver not ready %v after start: %v", timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Kill ends a process this helper started; envtest stops its own.
func (a *APIServer) Kill() {
	if a.cmd == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.exited
	}
}

// gone tells whether a process of envtest's has exited: reaped, or a zombie
// (envtest waits for its processes only when it stops them).
func gone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X'
}

// PID is the apiserver's process id.
func (a *APIServer) PID() int {
	if a.cmd != nil && a.cmd.Process != nil {
		return a.cmd.Process.Pid
	}
	return a.pid
}
