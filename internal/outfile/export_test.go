package outfile

// What the package keeps to itself, by the names its external tests use.
var (
	Create    = createPath
	ErrExists = errExists
)

const Mode = mode
