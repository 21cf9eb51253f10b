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
	return BusyFilterBuild(t, "")
}

// BusyFilterBuild is BusyFilter with the object's bpf_metadata_build set
// to build (at most 15 bytes; "" leaves its "abc"): the code is the same,
// so each load has the same tag and function names, as a program reloaded
// with a new build has, and other metadata.
func BusyFilterBuild(t testing.TB, build string) (progs []Loaded, busy func(d time.Duration) int) {
	t.Helper()
	BPF(t)
	spec, err := ebpf.LoadCollectionSpec(Fixture("meta"))
	if err != nil {
		t.Fatal(err)
	}
	if build != "" {
		var b [16]byte
		if len(build) >= len(b) {
			t.Fatalf("build %q is too long for char[%d]", build, len(b))
		}
		copy(b[:], build)
		if err := spec.Variables["bpf_metadata_build"].Set(b); err != nil {
			t.Fatalf("setting bpf_metadata_build: %v", err)
		}
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
