package bpfprog_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Look a program up by the id and tag of a recording's BPF_EVENT, as
// inject does, in programs held in memory: package bpfprog/live answers
// the same for the running kernel, bpfprog/snapshot for a snapshot file.
func ExampleList() {
	tag, err := perfdata.ParseBPFTag("e21be2de8fc54252")
	if err != nil {
		log.Fatal(err)
	}
	src := &bpfprog.List{Programs: []*bpfprog.Program{{
		ID: 97, Tag: tag, Name: "myprog",
		Funcs: []bpfprog.Func{{Tag: tag, Addr: 0xffffffffc0023054, Len: 40, PerfName: "bpf_prog_e21be2de8fc54252_myprog"}},
		Metadata: &bpfprog.Metadata{MapID: 29, MapName: ".rodata", ProgNames: []string{"bpf_prog_e21be2de8fc54252_myprog"},
			Entries: []bpfprog.Entry{{Key: "version", Value: `"1.0"`, Typed: json.RawMessage(`"1.0"`)}}},
	}}}

	p, err := src.Lookup(97, tag)
	if err != nil {
		log.Fatal(err)
	}
	md, err := p.BPFMetadata()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Name, md.Entries[0].Key, md.Entries[0].Value)
	_, err = src.Lookup(97, perfdata.BPFTag{}) // the id reused by another program
	fmt.Println(errors.Is(err, bpfprog.ErrTagMismatch))
	_, err = src.Lookup(98, tag)
	fmt.Println(err)

	// Every document of bpfmeta has a program in this form.
	b, err := json.Marshal(p)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(b))
	// Output:
	// myprog version "1.0"
	// true
	// program 98: no such BPF program
	// {"id":97,"tag":"e21be2de8fc54252","name":"myprog","type":"unspec","loaded_at":0,"load_time_ns":0,"uid":0,"btf_id":0,"map_ids":[],"funcs":[{"tag":"e21be2de8fc54252","addr":"0xffffffffc0023054","len":40,"perf_name":"bpf_prog_e21be2de8fc54252_myprog","kernel_name":""}],"metadata":{"map_id":29,"map_name":".rodata","btf_id":0,"prog_names":["bpf_prog_e21be2de8fc54252_myprog"],"entries":[{"key":"version","value":"\"1.0\"","typed":"1.0"}]}}
}

// A kernel address in JSON is a string: it is above 2^53, where readers
// that use doubles round a number.
func ExampleAddr() {
	b, err := json.Marshal(struct {
		Addr bpfprog.Addr `json:"addr"`
	}{0xffffffffc0023054})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(b))
	a, err := bpfprog.ParseAddr("0xffffffffc0023054")
	fmt.Printf("%#x %v\n", uint64(a), err)
	_, err = bpfprog.ParseAddr("18446744072635953224")
	fmt.Println(err)
	// Output:
	// {"addr":"0xffffffffc0023054"}
	// 0xffffffffc0023054 <nil>
	// not 0x-prefixed hex
}
