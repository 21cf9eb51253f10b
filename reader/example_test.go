package reader_test

import (
	"fmt"
	"log"

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
