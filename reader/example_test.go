package reader_test

import (
	"bytes"
	"fmt"
	"log"
	"os"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// Count the records of a recording by type, as perf report --stats does.
func ExampleOpen() {
	r, err := reader.Open("../testdata/corpus/autofdo_perf5.6_x86_64_small.data", reader.Options{Decompress: true})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	counts := map[perfdata.RecordType]int{}
	for r.Next() {
		counts[r.Record().Header.Type]++
	}
	if err := r.Err(); err != nil {
		log.Fatal(err) // says where: "truncated SAMPLE record ... at 0x1f3a8"
	}
	o, _ := r.Origin()
	fmt.Println(r.Format(), "format, recorded by perf", o.PerfVersion)
	fmt.Println(counts[perfdata.RecordSample], "samples,", counts[perfdata.RecordMmap2], "mmaps")
	// Output:
	// file format, recorded by perf 5.6.14
	// 13 samples, 5 mmaps
}

// Read a recording held in memory (or any io.ReaderAt: a file, an mmap) of
// a known size: file mode by offset, the header's sections where they are.
func ExampleNewFile() {
	b, err := os.ReadFile("../testdata/corpus/autofdo_perf5.6_x86_64_small.data")
	if err != nil {
		log.Fatal(err)
	}
	r, err := reader.NewFile(bytes.NewReader(b), int64(len(b)), reader.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	l := r.Layout()
	fmt.Printf("%d events; data section at %#x, %d bytes\n", len(l.Attrs), l.DataOffset(), l.Header.Data.Size)
	for r.Next() {
		if rec := r.Record(); rec.Header.Type == perfdata.RecordComm {
			fmt.Printf("COMM at %#x, %d bytes\n", rec.Offset, rec.Header.Size)
			break
		}
	}
	// Output:
	// 1 events; data section at 0x318, 1384 bytes
	// COMM at 0x360, 48 bytes
}

// Read a pipe-mode recording as it arrives (perf record -o - | ...), from
// a reader that cannot seek: records come one at a time, the compressed
// records of perf record -z decoded into the records inside them.
func ExampleNewStream() {
	f, err := os.Open("../testdata/corpus/mstange_perf6.16_x86_64_zstd_compressed2.pipe.data")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r, err := reader.NewStream(f, reader.Options{Decompress: true})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	o, _ := r.Origin()
	c := r.Counts()
	fmt.Println(r.Format(), "format, recorded by perf", o.PerfVersion)
	fmt.Println(c.Records, "records in the stream,", c.Inner, "inside compressed ones")
	// Output:
	// pipe format, recorded by perf 6.16-1
	// 197 records in the stream, 13 inside compressed ones
}
