package sessions_test

import (
	"net"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
)

// faultProxy is a TCP proxy on 127.0.0.1 between a client and a server,
// which breaks connections on command: the i-th connection it accepts is
// cut once killAfter[i] bytes have gone upstream (0: never). It can also
// slow the upstream to a rate, and it logs every upstream chunk, so a
// test sees what the client sent and when. It can also hold new
// connections before they reach the server, so a test can act while a
// client's dial is under way.
type faultProxy struct {
	ln     net.Listener
	target string
	closed chan struct{}

	mu        sync.Mutex // guards conns, killAfter, upRate, holdCh, waiting
	conns     []*proxyConn
	killAfter []int64
	upRate    int64         // bytes per second; 0 for no limit
	holdCh    chan struct{} // while not nil, new connections wait for it to close
	waiting   int           // connections held now

	wg sync.WaitGroup
}

// proxyConn is one client connection and its connection to the server.
type proxyConn struct {
	client, server net.Conn
	opened         time.Time

	mu     sync.Mutex // guards the fields below
	up     int64
	down   int64
	chunks []upChunk
	killed bool
	closed time.Time

	closeOnce sync.Once
}

// upChunk is one read from the client, as forwarded, with its first
// chunkKeep bytes.
type upChunk struct {
	at   time.Time
	n    int
	data []byte
}

// chunkKeep bounds the bytes of each chunk the proxy keeps: enough for
// HTTP heads and control frames, not a copy of every upload.
const chunkKeep = 4 << 10

// newFaultProxy starts a proxy to target (host:port), closed at the end
// of the test.
func newFaultProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{ln: ln, target: target, closed: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.accept()
	}()
	t.Cleanup(p.close)
	return p
}

// endpoint is the address clients use to go through the proxy.
func (p *faultProxy) endpoint() api.Endpoint {
	return api.Endpoint{Base: &url.URL{Scheme: "http", Host: p.ln.Addr().String()}}
}

// setKillAfter sets how many upstream bytes each connection, in the order
// they are accepted, may carry before it is cut.
func (p *faultProxy) setKillAfter(bytes ...int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.killAfter = bytes
}

// setUpRate limits the upstream to rate bytes per second.
func (p *faultProxy) setUpRate(rate int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.upRate = rate
}

// hold makes new connections wait, unconnected to the server, until
// release.
func (p *faultProxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.holdCh == nil {
		p.holdCh = make(chan struct{})
	}
}

// release lets the held connections through, and those that follow.
func (p *faultProxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.holdCh != nil {
		close(p.holdCh)
		p.holdCh = nil
	}
}

// held returns how many connections wait to reach the server.
func (p *faultProxy) held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting
}

func (p *faultProxy) connections() []*proxyConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.conns)
}

func (p *faultProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		h := p.holdCh
		if h != nil {
			p.waiting++
		}
		p.mu.Unlock()
		if h != nil {
			select {
			case <-h:
			case <-p.closed:
			}
			p.mu.Lock()
			p.waiting--
			p.mu.Unlock()
			select {
			case <-p.closed:
				client.Close()
				return
			default:
			}
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		c := &proxyConn{client: client, server: server, opened: time.Now()}
		p.mu.Lock()
		limit := int64(0)
		if i := len(p.conns); i < len(p.killAfter) {
			limit = p.killAfter[i]
		}
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			p.upstream(c, limit)
		}()
		go func() {
			defer p.wg.Done()
			c.downstream()
		}()
	}
}

// upstream forwards the client's bytes, cutting the connection at limit.
func (p *faultProxy) upstream(c *proxyConn, limit int64) {
	defer c.close(false)
	buf := make([]byte, 32<<10)
	for {
		n, err := c.client.Read(buf)
		if n > 0 {
			c.mu.Lock()
			cut := limit > 0 && c.up+int64(n) >= limit
			if cut {
				n = int(limit - c.up) // what fits: the cut may fall mid-frame
			}
			c.up += int64(n)
			c.chunks = append(c.chunks, upChunk{at: time.Now(), n: n, data: slices.Clone(buf[:min(n, chunkKeep)])})
			c.mu.Unlock()
			if _, werr := c.server.Write(buf[:n]); werr != nil {
				return
			}
			if cut {
				c.close(true)
				return
			}
			p.mu.Lock()
			rate := p.upRate
			p.mu.Unlock()
			if rate > 0 {
				time.Sleep(time.Duration(int64(n) * int64(time.Second) / rate))
			}
		}
		if err != nil {
			return
		}
	}
}

func (c *proxyConn) downstream() {
	defer c.close(false)
	buf := make([]byte, 32<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 {
			c.mu.Lock()
			c.down += int64(n)
			c.mu.Unlock()
			if _, werr := c.client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// close ends both sides at once, as a network failure would; killed
// marks a cut on command.
func (c *proxyConn) close(killed bool) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.killed = killed
		c.closed = time.Now()
		c.mu.Unlock()
		// An abortive close (RST), not a FIN: the peer learns nothing
		// cleanly.
		if tc, ok := c.client.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		if tc, ok := c.server.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.client.Close()
		c.server.Close()
	})
}

func (c *proxyConn) wasKilled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed
}

func (c *proxyConn) upChunks() []upChunk {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.chunks)
}

func (c *proxyConn) upBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up
}

func (c *proxyConn) isOpen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed.IsZero()
}

// close stops accepting, cuts every connection and waits for the pipes.
func (p *faultProxy) close() {
	close(p.closed)
	p.ln.Close()
	for _, c := range p.connections() {
		c.close(false)
	}
	p.wg.Wait()
}

func TestFaultProxy(t *testing.T) {
	// The proxy itself: bytes pass both ways, and a connection is cut
	// exactly at its limit.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // an echo server
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 1024)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						c.Write(buf[:n])
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	defer func() { ln.Close(); wg.Wait() }()
	p := newFaultProxy(t, ln.Addr().String())
	p.setKillAfter(0, 10)
	for i, want := range []struct {
		sent, forwarded int
		killed          bool
	}{{20, 20, false}, {20, 10, true}} {
		c, err := net.Dial("tcp", p.ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write(make([]byte, want.sent))
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		got := 0
		buf := make([]byte, 64)
		for got < want.sent {
			n, err := c.Read(buf)
			got += n
			if err != nil {
				break
			}
		}
		c.Close()
		conns := p.connections()
		if len(conns) != i+1 {
			t.Fatalf("%d connections, want %d", len(conns), i+1)
		}
		eventually(t, "the pipes to settle", func() bool { return conns[i].wasKilled() == want.killed })
		// What went upstream is counted by the proxy itself; what came
		// back of a cut connection may be lost to the reset, so only its
		// bound is certain.
		if up := conns[i].upBytes(); up != int64(want.forwarded) {
			t.Errorf("connection %d: %d bytes went upstream, want %d", i, up, want.forwarded)
		}
		switch {
		case want.killed && got > want.forwarded:
			t.Errorf("connection %d: %d bytes came back, want at most %d", i, got, want.forwarded)
		case !want.killed && got != want.sent:
			t.Errorf("connection %d: %d bytes came back, want %d", i, got, want.sent)
		}
	}
}
