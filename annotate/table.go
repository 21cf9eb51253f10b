// Package annotate labels the BPF frames of perf script text with their programs' metadata.
//
// It puts BPF programs' metadata on their frames in perf script output: a
// frame whose symbol is a JITed BPF function, bpf_prog_<tag>_<name> as perf
// names it (from its KSYMBOL), gets the program's metadata right after the
// symbol, in a form that FlameGraph's stackcollapse-perf.pl and inferno keep
// as part of the frame name. It also folds perf script output into stacks
// itself, as stackcollapse-perf.pl does.
//
// It reads text, not recordings: which program a symbol names, and its
// metadata, come from a Table the caller fills (bpfmeta annotate fills it
// from a recording's BPF_METADATA records, through bpftrack).
package annotate

import (
	"slices"
	"strings"

	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Ambiguous is the label of a symbol that names functions of several loads
// with different metadata: which load a sample was in cannot be told from
// the text, so none is guessed.
const Ambiguous = "[bpfmeta:ambiguous]"

// NotInRecording is the label of a frame of a function the table knows
// whose address (and time, where the text prints one) lies in no load of
// that name in the recording: the text was not made from the recording,
// or not from all of it, and no load's metadata is proven to be the
// frame's.
const NotInRecording = "[bpfmeta:not-in-recording]"

// MetadataPrefix is what perf's key names start with in the program's
// .rodata (bpf_metadata_version); keys are matched with or without it.
const MetadataPrefix = "bpf_metadata_"

// Table maps BPF function symbols to the label their frames get. Its size
// is bounded by the programs added to it, never by the text annotated.
type Table struct {
	keys   []string // chosen keys, in order; nil: every key, in the record's order
	labels map[string]*label
	// size is what the labels take, drawn from the process's memory
	// budget: a recording's records are bounded by their number, and each
	// may be labelled with up to 202 entries of 255-byte values.
	size int64
	mem  budget.Meter
	// recorded: every load of each function is known (Fill read the
	// recording's KSYMBOLs, spans): a frame whose address lies in none is
	// NotInRecording.
	recorded bool
	// keysSeen are the keys of the entries added (without
	// bpf_metadata_), at most MaxKeysSeen; moreKeys: there were others.
	keysSeen map[string]bool
	moreKeys bool
}

// MaxKeysSeen bounds the distinct keys a table keeps to name them (Keys).
const MaxKeysSeen = 256

// labelCost is what a label costs beside its strings: its map entry and
// struct.
const labelCost = 128

type label struct {
	entries   []perfdata.BPFMetadataEntry
	ambiguous bool
	text      string // the label, made once
	// loads are where each load of an ambiguous function is, with its
	// label or Ambiguous (SetLoads); nil: a frame's address does not
	// tell.
	loads []placedLoad
	// spans are where and when every load of the function was, when the
	// table is recorded.
	spans []span
}

// A span is where and when one load's JITed code was: its KSYMBOL's
// [addr, end), from the KSYMBOL's time to its unregistering's or the
// recording's end (to 0: unknown, any time).
type span struct{ addr, end, from, to uint64 }

// A textTime is a sample's time as perf script prints it, on perf's clock
// to the microsecond (or the nanosecond, --ns): [lo, hi] in ns.
type textTime struct {
	lo, hi uint64
	ok     bool
}

// holds reports whether the load's code held ip at the time at, as
// perf's machine__process_ksymbol() maps the load's range to its symbol
// from its KSYMBOL on, and its unregistering removes it.
func (s span) holds(ip uint64, at textTime) bool {
	if ip < s.addr || ip >= s.end {
		return false
	}
	return !at.ok || s.to == 0 || at.lo <= s.to && s.from <= at.hi
}

// A Load is one load of a function: where the kernel put its JITed code
// (its KSYMBOL's addr and len) and its metadata.
type Load struct {
	Addr    uint64
	Len     uint32
	Entries []perfdata.BPFMetadataEntry
	// Unknown: no record says its metadata (it has none, or its record
	// is missing), so its frames are ambiguous.
	Unknown bool
	// from and to are its lifetime (span), when Fill knows it.
	from, to uint64
}

type placedLoad struct {
	span
	text string
}

// NewTable returns a table whose labels carry keys, in that order (their
// names without bpf_metadata_), or every entry when keys is empty.
func NewTable(keys []string) *Table {
	t := &Table{labels: map[string]*label{}, keysSeen: map[string]bool{}, mem: budget.Meter{What: "annotate's labels"}}
	for _, k := range keys {
		t.keys = append(t.keys, strings.TrimPrefix(k, MetadataPrefix))
	}
	return t
}

// ChosenKeys are the keys the labels carry, in order (without
// bpf_metadata_); none: every key.
func (t *Table) ChosenKeys() []string { return slices.Clone(t.keys) }

// Len is the number of symbols the table knows.
func (t *Table) Len() int { return len(t.labels) }

// Add says that the function sym has the metadata entries. A symbol added
// twice with other entries (two loads of one program, of other builds)
// becomes ambiguous. The error is the memory budget's, when the labels
// would take more than it has left.
func (t *Table) Add(sym string, entries []perfdata.BPFMetadataEntry) error {
	if err := t.seeKeys(entries); err != nil {
		return err
	}
	if l, ok := t.labels[sym]; ok {
		if !l.ambiguous && !slices.Equal(l.entries, entries) {
			t.SetAmbiguous(sym)
		}
		return nil
	}
	l := &label{entries: slices.Clone(entries)}
	l.text = t.format(l.entries)
	size := int64(len(sym)+len(l.text)) + labelCost
	for _, e := range entries {
		size += int64(len(e.Key)+len(e.Value)) + 32
	}
	if err := t.mem.Set(t.size + size); err != nil {
		return err
	}
	t.size += size
	t.labels[sym] = l
	return nil
}

// Close gives back the memory the labels drew from the budget.
func (t *Table) Close() { t.mem.Close() }

// SetAmbiguous marks sym as a function of several loads whose metadata
// differ, or that a record cannot be told to belong to. The error is the
// memory budget's, for a symbol it did not know.
func (t *Table) SetAmbiguous(sym string) error {
	l, ok := t.labels[sym]
	if !ok {
		size := int64(len(sym)) + labelCost
		if err := t.mem.Set(t.size + size); err != nil {
			return err
		}
		t.size += size
		l = &label{}
		t.labels[sym] = l
	}
	*l = label{ambiguous: true, text: Ambiguous, spans: l.spans}
	return nil
}

// SetLoads says where every load of the function sym is, and the
// metadata of each, and makes sym ambiguous but where a frame's address
// tells: a frame whose address is in loads of one label only gets that
// label. It must be every load of sym the text can have frames of: a load
// left out would have its frames given another's label where the kernel
// put both at one address. The error is the memory budget's.
func (t *Table) SetLoads(sym string, loads []Load) error {
	if err := t.SetAmbiguous(sym); err != nil {
		return err
	}
	l := t.labels[sym]
	placed := make([]placedLoad, 0, len(loads))
	size := int64(0)
	for _, ld := range loads {
		text := Ambiguous
		if !ld.Unknown {
			text = t.format(ld.Entries)
		}
		placed = append(placed, placedLoad{span{ld.Addr, ld.Addr + uint64(ld.Len), ld.from, ld.to}, text})
		size += int64(len(text)) + 48
	}
	if err := t.mem.Set(t.size + size); err != nil {
		return err
	}
	t.size += size
	l.loads = placed
	return nil
}

// labelAt is the label of a frame of the function sym at ip (hasIP: the
// frame has its address) in a sample at the time at: NotInRecording
// where the table is recorded and no load of sym held ip then; for an
// ambiguous function whose loads are known, the label of the loads whose
// code held ip, when they have one label, as perf's
// machine__process_ksymbol() maps each load's address range to its
// symbol.
func (t *Table) labelAt(sym []byte, ip uint64, hasIP bool, at textTime) string {
	l, ok := t.labels[string(sym)]
	if !ok {
		return ""
	}
	if !hasIP {
		return l.text
	}
	if t.recorded && !slices.ContainsFunc(l.spans, func(s span) bool { return s.holds(ip, at) }) {
		return NotInRecording
	}
	if l.loads == nil {
		return l.text
	}
	text, found := "", false
	for _, ld := range l.loads {
		if ld.holds(ip, at) {
			switch {
			case !found:
				text, found = ld.text, true
			case text != ld.text:
				return Ambiguous // loads of other labels at one address, one after the other
			}
		}
	}
	if !found {
		return NotInRecording // in no load of the function
	}
	return text
}

// setSpans says where and when every load of sym in the recording was.
func (t *Table) setSpans(sym string, spans []span) error {
	l, ok := t.labels[sym]
	if !ok {
		return nil
	}
	size := int64(len(spans)) * 32
	if err := t.mem.Set(t.size + size); err != nil {
		return err
	}
	t.size += size
	l.spans = spans
	return nil
}

// Keys are the keys of the metadata added (without bpf_metadata_),
// sorted, and whether there were more than MaxKeysSeen.
func (t *Table) Keys() ([]string, bool) {
	keys := make([]string, 0, len(t.keysSeen))
	for k := range t.keysSeen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, t.moreKeys
}

// MissingKeys are the keys --keys chose (ChosenKeys) that no record added
// has, in the order chosen; none when the records have more keys than
// the table notes (Keys: more), since a key may be among those.
func (t *Table) MissingKeys() []string {
	if t.moreKeys {
		return nil
	}
	var missing []string
	for _, k := range t.keys {
		if !t.keysSeen[k] {
			missing = append(missing, k)
		}
	}
	return missing
}

// seeKeys notes the keys of entries, for Keys.
func (t *Table) seeKeys(entries []perfdata.BPFMetadataEntry) error {
	for _, e := range entries {
		k := strings.TrimPrefix(e.Key, MetadataPrefix)
		switch {
		case t.keysSeen[k]:
		case len(t.keysSeen) >= MaxKeysSeen:
			t.moreKeys = true
		default:
			size := int64(len(k)) + 48
			if err := t.mem.Set(t.size + size); err != nil {
				return err
			}
			t.size += size
			t.keysSeen[k] = true
		}
	}
	return nil
}

// Label returns the label of the function sym, "" when sym has none (not
// a BPF function the table knows, or none of the chosen keys).
func (t *Table) Label(sym string) string {
	if l, ok := t.labels[sym]; ok {
		return l.text
	}
	return ""
}

// format makes the label of entries: [key=value,key=value], keys without
// bpf_metadata_, a string's quotes dropped, and every byte that
// stackcollapse-perf.pl or a flame graph would cut, change or split a
// frame at written as %XX (see safe).
func (t *Table) format(entries []perfdata.BPFMetadataEntry) string {
	var b strings.Builder
	add := func(k, v string) {
		if b.Len() == 0 {
			b.WriteByte('[')
		} else {
			b.WriteByte(',')
		}
		escape(&b, k)
		b.WriteByte('=')
		// btf_dump writes a string as "..." (and a cut one without its
		// closing quote, as perf cuts values to 255 bytes)
		v = strings.TrimPrefix(v, `"`)
		v = strings.TrimSuffix(v, `"`)
		escape(&b, v)
	}
	if t.keys == nil {
		for _, e := range entries {
			add(strings.TrimPrefix(e.Key, MetadataPrefix), e.Value)
		}
	} else {
		for _, k := range t.keys {
			for _, e := range entries {
				if strings.TrimPrefix(e.Key, MetadataPrefix) == k {
					add(k, e.Value)
					break
				}
			}
		}
	}
	if b.Len() == 0 {
		return ""
	}
	b.WriteByte(']')
	return b.String()
}

// escape writes s with the bytes that are not safe as %XX.
func escape(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		if c := s[i]; safe(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

// safe reports whether c stays as it is in a label. stackcollapse-perf.pl
// splits a line's symbol from its dso at " (", cuts a frame at its first
// "(" and at "->" (inlined frames), turns ";" (the folded format's frame
// separator) into ":", and deletes quotes; flame graphs end a frame's
// name at whitespace before the count. The label's own [ , = ] and % are
// escaped within it, and everything outside printable ASCII.
func safe(c byte) bool {
	if c <= ' ' || c >= 0x7f {
		return false
	}
	switch c {
	case '(', ')', ';', '"', '\'', '>', '[', ']', ',', '=', '%', '+':
		return false
	}
	return true
}
