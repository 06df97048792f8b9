package lab

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// proc is one lab process. It is started in its own process group so that a
// stop takes down anything it spawned; unless detached, it is also killed by
// the kernel if the test binary that started it dies (Pdeathsig), so a
// crashed or timed-out e2e run leaves nothing behind.
type proc struct {
	Name    string   `json:"name"`
	Bin     string   `json:"bin"`
	Args    []string `json:"args"`
	Env     []string `json:"env,omitempty"`
	Dir     string   `json:"dir"`
	LogPath string   `json:"log"`
	// Wrap, when set, is a command that runs Bin with Args in the end
	// (unshare for istiod with the lab's DNS): it must exec, not fork,
	// so that PID still runs Bin.
	Wrap []string `json:"wrap,omitempty"`
	PID  int      `json:"pid"`

	cmd  *exec.Cmd
	done chan struct{} // closed when a non-detached process has been reaped
}

func (p *proc) start(detach bool) error {
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	argv := append(append(append([]string(nil), p.Wrap...), p.Bin), p.Args...)
	fmt.Fprintf(logf, "\n=== %s: %s\n", time.Now().Format(time.RFC3339), strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = p.Dir
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if !detach {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	p.PID = cmd.Process.Pid
	if detach {
		// The process outlives us: track it by PID only (see pidAlive).
		p.cmd = nil
		return cmd.Process.Release()
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(p.done) }()
	return nil
}

// exited reports whether a non-detached process has already died, with the
// tail of its log to say why.
func (p *proc) exited() (bool, string) {
	if p.cmd == nil {
		if pidAlive(p.PID, p.Bin) || p.inWrapper() {
			return false, ""
		}
		b, _ := os.ReadFile(p.LogPath)
		return true, tail(string(b), 15)
	}
	select {
	case <-p.done:
		b, _ := os.ReadFile(p.LogPath)
		return true, tail(string(b), 15)
	default:
		return false, ""
	}
}

// inWrapper reports whether a detached wrapped process still runs one of
// its wrapper's programs (unshare, sh), before they exec Bin: it has not
// exited, it has not started Bin yet.
func (p *proc) inWrapper() bool {
	for _, w := range p.Wrap {
		if strings.HasPrefix(w, "-") || strings.Contains(w, " ") {
			continue
		}
		path, err := exec.LookPath(w)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
		if pidAlive(p.PID, path) {
			return true
		}
	}
	return false
}

// stop sends SIGTERM to the process group, waits up to 10 s, then SIGKILLs.
// It works both for children of this process and for PIDs from a state file;
// for the latter it first checks that the PID still runs the lab binary, so a
// reused PID is never killed.
func (p *proc) stop() error { return p.signal(syscall.SIGTERM, 10*time.Second) }

// kill SIGKILLs the process group at once: no graceful shutdown, as when
// a node or the OOM killer takes a process.
func (p *proc) kill() error { return p.signal(syscall.SIGKILL, 0) }

// signal sends sig to the process group and waits up to grace for it to
// end before it SIGKILLs.
func (p *proc) signal(sig syscall.Signal, grace time.Duration) error {
	if p.PID == 0 {
		return nil
	}
	if p.cmd == nil && !pidAlive(p.PID, p.Bin) && !p.inWrapper() {
		p.PID = 0
		return nil
	}
	_ = syscall.Kill(-p.PID, sig)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if p.gone() {
			p.PID = 0
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	for i := 0; i < 100 && !p.gone(); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if !p.gone() {
		return fmt.Errorf("%s (pid %d) did not stop", p.Name, p.PID)
	}
	p.PID = 0
	return nil
}

func (p *proc) gone() bool {
	if p.cmd != nil {
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	}
	return !pidAlive(p.PID, p.Bin) && !p.inWrapper()
}

// pidAlive reports whether pid runs bin (by /proc/PID/exe), so that stale
// PIDs in a state file are never mistaken for lab processes.
func pidAlive(pid int, bin string) bool {
	if pid <= 0 {
		return false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// A zombie has exited; only its parent's wait is missing.
		if f := strings.Fields(string(st)); len(f) > 2 && f[2] == "Z" {
			return false
		}
	}
	exe = strings.TrimSuffix(exe, " (deleted)")
	want, _ := filepath.Abs(bin)
	return exe == want || filepath.Base(exe) == filepath.Base(bin)
}

// checkPorts fails with the name of the first busy port.
func checkPorts(ports map[int]string) error {
	var errs []error
	for port, what := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			errs = append(errs, fmt.Errorf("port %d (%s) is busy — is a lab already running? (make lab-down)", port, what))
			continue
		}
		l.Close()
	}
	return errors.Join(errs...)
}
