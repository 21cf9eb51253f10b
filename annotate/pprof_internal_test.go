package annotate

import (
	"slices"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// A label's metadata labels are its entries: keys prefixed bpf_, a
// string's quotes dropped, every byte format escapes back as it was.
func TestMetadataLabels(t *testing.T) {
	for _, entries := range [][]perfdata.BPFMetadataEntry{
		{{Key: "bpf_metadata_version", Value: `"1.4.2"`}},
		{{Key: "bpf_metadata_a", Value: "x"}, {Key: "bpf_metadata_b", Value: "-5"}},
		{{Key: "bpf_metadata_k,=[]%", Value: `"a b,c=d%]["` + "\x00\xff;()'>+"}},
		{{Key: "bpf_metadata_cut", Value: `"no closing quote`}},
		{{Key: "bpf_metadata_empty", Value: ""}},
	} {
		tab := NewTable(nil)
		label := tab.format(entries)
		var want [][2]string
		for _, e := range entries {
			v := strings.TrimSuffix(strings.TrimPrefix(e.Value, `"`), `"`)
			want = append(want, [2]string{MetadataLabelPrefix + strings.TrimPrefix(e.Key, MetadataPrefix), v})
		}
		if got := metadataLabels(label); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", label, got, want)
		}
	}
	for _, notLabel := range []string{"", Ambiguous[:5], "[a]", "a=b"} {
		if got := metadataLabels(notLabel); got != nil {
			t.Errorf("%q: %q, want none", notLabel, got)
		}
	}
}
