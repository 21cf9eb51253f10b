package reader

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestFrameWindow: the window a frame header declares is the one its
// encoder was given, as a window descriptor or, for a frame of one
// segment, its content size.
func TestFrameWindow(t *testing.T) {
	for _, c := range []struct {
		window, content int
		single          bool
		want            int64
	}{
		{1 << 20, 100, false, 1 << 20},
		{32 << 20, 100, false, 32 << 20},
		{1 << 10, 100, false, 1 << 10},
		{1 << 20, 100, true, 100},
		{1 << 20, 300, true, 300},
		{1 << 20, 70000, true, 70000},
	} {
		var b bytes.Buffer
		enc, err := zstd.NewWriter(&b, zstd.WithWindowSize(c.window), zstd.WithSingleSegment(c.single), zstd.WithEncoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		if c.single {
			b.Write(enc.EncodeAll(make([]byte, c.content), nil))
		} else {
			enc.Write(make([]byte, c.content))
			enc.Flush() // a stream of unknown size, as perf record writes

		}
		h := b.Bytes()[4:] // after the magic number
		if got := frameWindow(h[:1+frameHeaderRest(h[0])]); got != c.want {
			t.Errorf("window %d, %d bytes, single segment %v: frameWindow %d, want %d", c.window, c.content, c.single, got, c.want)
		}
	}
}
