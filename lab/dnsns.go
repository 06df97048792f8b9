package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// istiod resolves gateway names with the servers of /etc/resolv.conf
// (pilot/pkg/model/network.go newClient), a path no flag or env changes.
// The lab runs it in a mount namespace of its own where a resolv.conf
// naming the lab's DNS is bind-mounted over /etc/resolv.conf: the machine's
// file is untouched, and nothing else sees the lab's DNS.

// ErrNoDNSNamespace: the lab cannot give istiod a resolv.conf of its own
// (no unshare, no mount namespaces, not root).
var ErrNoDNSNamespace = errors.New("lab: istiod cannot get a resolv.conf of its own")

const dnsBin = "lab-dns"

func (l *Lab) resolvConfPath() string { return filepath.Join(l.cfg.Dir, "dns", "resolv.conf") }

// dnsWrap runs a program with the lab's resolv.conf over /etc/resolv.conf,
// in a private mount namespace; sh execs the program, so its PID stays.
func (l *Lab) dnsWrap() []string {
	return []string{"unshare", "--mount", "--propagation", "private", "--",
		"sh", "-c", `mount --bind "$0" /etc/resolv.conf && exec "$@"`, l.resolvConfPath()}
}

// checkDNSNamespace tries what dnsWrap does, with a program that only
// reads the file back, and says why it cannot work.
func (l *Lab) checkDNSNamespace() error {
	if _, err := exec.LookPath("unshare"); err != nil {
		return fmt.Errorf("%w: no unshare command (util-linux): %v", ErrNoDNSNamespace, err)
	}
	args := append(l.dnsWrap()[1:], "cat", "/etc/resolv.conf")
	out, err := exec.Command("unshare", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: unshare --mount and a bind mount are not permitted here (%v: %s)", ErrNoDNSNamespace, err, strings.TrimSpace(string(out)))
	}
	if !strings.Contains(string(out), l.cfg.DNSIP) {
		return fmt.Errorf("%w: the bind-mounted resolv.conf does not show (%s)", ErrNoDNSNamespace, strings.TrimSpace(string(out)))
	}
	return nil
}

// startDNS builds and starts the lab's DNS server, with no names yet, and
// writes the resolv.conf that names it.
func (l *Lab) startDNS(ctx context.Context) error {
	if l.dns != nil && !l.dns.gone() {
		return nil
	}
	if err := writeDNSRecords(l.dnsRecordsPath(), DNSRecords{}); err != nil {
		return err
	}
	if err := os.WriteFile(l.resolvConfPath(), []byte("# the lab's DNS (lab/dns.go)\nnameserver "+l.cfg.DNSIP+"\n"), 0o644); err != nil {
		return err
	}
	// Built per lab, beside its records: meshscope's own code, a relink
	// when nothing changed.
	bin := filepath.Join(l.cfg.Dir, "dns", dnsBin)
	if err := goCmd(l.cfg.Root, "build", "-o", bin, "./lab/cmd/lab-dns"); err != nil {
		return fmt.Errorf("lab build %s failed (go build ./lab/cmd/lab-dns): %w", dnsBin, err)
	}
	l.dns = &proc{
		Name:    dnsBin,
		Bin:     bin,
		Args:    []string{"-listen", l.DNSServer(), "-records", l.dnsRecordsPath()},
		Dir:     l.cfg.Dir,
		LogPath: filepath.Join(l.cfg.Dir, "logs", dnsBin+".log"),
	}
	if err := l.dns.start(l.cfg.Detach); err != nil {
		return err
	}
	if err := l.saveState(); err != nil {
		return err
	}
	c := &dns.Client{Timeout: time.Second}
	return waitFor(ctx, "lab DNS", 30*time.Second, l.dns, func() error {
		_, _, err := c.Exchange(new(dns.Msg).SetQuestion("probe."+LabDNSDomain+".", dns.TypeA), l.DNSServer())
		return err
	})
}

// EnableDNS starts the lab's DNS server and restarts every istiod so that
// it resolves names with it (Config.DNS does so from the start). It fails
// with ErrNoDNSNamespace when the machine does not allow it; istiods then
// run as before.
func (l *Lab) EnableDNS(ctx context.Context) error {
	if err := l.startDNS(ctx); err != nil {
		return err
	}
	if err := l.checkDNSNamespace(); err != nil {
		return err
	}
	return l.restartIstiodsWrapped(ctx, l.dnsWrap())
}

// DisableDNS restarts every istiod with the machine's resolv.conf, as the
// lab runs by default, and stops the lab's DNS server.
func (l *Lab) DisableDNS(ctx context.Context) error {
	if err := l.restartIstiodsWrapped(ctx, nil); err != nil {
		return err
	}
	if l.dns == nil {
		return nil
	}
	err := l.dns.stop()
	l.dns = nil
	return errors.Join(err, l.saveState())
}

func (l *Lab) restartIstiodsWrapped(ctx context.Context, wrap []string) error {
	for _, is := range l.istiods {
		if err := is.proc.stop(); err != nil {
			return err
		}
		is.proc.Wrap = wrap
		if err := is.proc.start(l.cfg.Detach); err != nil {
			return err
		}
	}
	if err := l.saveState(); err != nil {
		return err
	}
	for _, is := range l.istiods {
		if err := l.waitIstiod(ctx, is); err != nil {
			return err
		}
	}
	return nil
}
