package writer_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// Write a file-format recording again as a pipe stream (what perf inject
// -o - writes), without its SAMPLE records.
func ExampleNew() {
	r, err := reader.Open("../testdata/corpus/autofdo_perf5.6_x86_64_small.data", reader.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var out bytes.Buffer
	w, err := writer.New(&out, r, writer.Options{Format: perfdata.FormatPipe})
	if err != nil {
		log.Fatal(err)
	}
	for r.Next() {
		if rec := r.Record(); rec.Header.Type != perfdata.RecordSample {
			if err := w.WriteRecord(rec); err != nil {
				log.Fatal(err)
			}
		}
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	back, err := reader.NewStream(&out, reader.Options{})
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for back.Next() {
		n++
	}
	fmt.Println(back.Format(), "format,", n, "records (the header sections are HEADER_* records now)")
	// Output:
	// pipe format, 31 records (the header sections are HEADER_* records now)
}

// Copy a recording without its SAMPLE records, and tell a failure of the
// input from one of the output.
func ExampleCopy() {
	r, err := reader.Open("../testdata/corpus/autofdo_perf5.6_x86_64_small.data", reader.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var out bytes.Buffer
	w, err := writer.New(&out, r, writer.Options{Format: perfdata.FormatPipe})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort() // if an error ends the copy
	dropped, err := writer.Copy(w, r, func(rec *perfdata.Record) bool {
		return rec.Header.Type != perfdata.RecordSample
	})
	var werr *writer.WriteError
	switch {
	case errors.As(err, &werr):
		log.Fatalf("writing the output: %v", werr.Err)
	case err != nil:
		log.Fatalf("reading the input: %v", err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("left out", dropped, "SAMPLE records")
	// Output:
	// left out 13 SAMPLE records
}
