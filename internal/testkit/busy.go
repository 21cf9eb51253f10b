package testkit

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// BusyFilter loads testdata/bpf/meta.bpf.o with cilium/ebpf, attaches its
// bpfprogt_multi_function_main as the socket filter of a UDP socket on the
// loopback and returns a function that sends datagrams to it in a tight
// loop for d: every datagram runs the program (and its two subprograms)
// once, so a profile of the loop has samples inside them.
func BusyFilter(t testing.TB) (progs []Loaded, busy func(d time.Duration) int) {
	t.Helper()
	BPF(t)
	spec, err := ebpf.LoadCollectionSpec(Fixture("meta"))
	if err != nil {
		t.Fatal(err)
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		t.Fatalf("loading meta.bpf.o: %v", err)
	}
	t.Cleanup(coll.Close)
	for name, p := range coll.Programs {
		progs = append(progs, Loaded{Loader: "cilium", Object: "meta", Name: name, ID: ProgramID(t, p)})
	}
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rx.Close() })
	raw, err := rx.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_BPF, coll.Programs["bpfprogt_multi_function_main"].FD())
	})
	if serr != nil {
		t.Fatalf("SO_ATTACH_BPF: %v", serr)
	}
	tx, err := net.DialUDP("udp4", nil, rx.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Close() })
	// drain the receiver, so that datagrams are not dropped before the filter
	var stop atomic.Bool
	go func() {
		buf := make([]byte, 64)
		for !stop.Load() {
			rx.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			rx.Read(buf)
		}
	}()
	t.Cleanup(func() { stop.Store(true) })
	msg := []byte("bpfmeta annotate")
	return progs, func(d time.Duration) int {
		n := 0
		for end := time.Now().Add(d); time.Now().Before(end); {
			for range 256 {
				if _, err := tx.Write(msg); err == nil {
					n++
				}
			}
		}
		return n
	}
}
