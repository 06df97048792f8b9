package main

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// countingProxy forwards a loopback port to istiod's xDS port and counts
// the bytes istiod sends through it: what a client "receives", on the wire
// (gRPC and HTTP/2 framing included), whatever the client is — an
// in-process stream or a meshscope binary.
type countingProxy struct {
	ln     net.Listener
	target string
	down   atomic.Int64 // bytes from istiod to the client
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
}

func newCountingProxy(target string) (*countingProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *countingProxy) addr() string { return p.ln.Addr().String() }

// received is the byte count so far.
func (p *countingProxy) received() int64 { return p.down.Load() }

func (p *countingProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(up, c); up.Close() }()
		go func() { defer p.wg.Done(); _, _ = io.Copy(countingWriter{c, &p.down}, up); c.Close() }()
	}
}

// close stops the proxy and every connection through it.
func (p *countingProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}
