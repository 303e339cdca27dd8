package jsonscan

// Sizing names the values whose sizes ValidIndexed reads while it
// validates: the objects at Paths (member names from the top), each sized
// as NewIndex(value, Apart) sizes it, the largest of each size over them.
type Sizing struct {
	Paths [][]string
	Apart string
}

// maxPath bounds the length of a sized path.
const maxPath = 6

// sizer reads the sizes of Sizing's values during validIndex's pass, told
// of each key, string, opening, comma and closing with the depth of the
// object or array they are in (1 for the top-level one).
type sizer struct {
	s     *Sizing
	sizes Sizes
	// alive[d] has bit p when the object at depth d is reached by the
	// first d-1 names of Paths[p]; matched[d] those of them whose next
	// name is the key read last at depth d.
	alive, matched [maxPath + 2]uint64
	// region is the depth of the sized object being read, 0 outside one;
	// apart tells the strings are in the value of its member Apart;
	// entries counts the members and elements of the open objects and
	// arrays of the region, from its depth on.
	region  int
	apart   bool
	entries []int32
}

func newSizer(s *Sizing) *sizer {
	if s == nil || len(s.Paths) == 0 || len(s.Paths) > 64 {
		return nil
	}
	for _, p := range s.Paths {
		if len(p) == 0 || len(p) > maxPath {
			return nil
		}
	}
	return &sizer{s: s}
}

// open: an object or array opened at depth d, not empty.
func (z *sizer) open(d int, object bool) {
	if z.region > 0 {
		z.entries = append(z.entries, 1)
		return
	}
	if d > maxPath+1 {
		return
	}
	var alive uint64
	switch {
	case !object:
	case d == 1:
		alive = 1<<len(z.s.Paths) - 1
	default:
		for p := range z.s.Paths {
			if z.matched[d-1]&(1<<p) == 0 {
				continue
			}
			if len(z.s.Paths[p]) == d-1 { // the value of a whole path
				z.region, z.apart, z.entries = d, false, append(z.entries[:0], 1)
				return
			}
			alive |= 1 << p
		}
	}
	z.alive[d], z.matched[d] = alive, 0
}

// key: a member's name b[start:end], quoted, at depth d.
func (z *sizer) key(b []byte, start, end, d int) {
	if z.region > 0 {
		if d == z.region {
			z.apart = keyIs(b[start:end], z.s.Apart)
			z.string(start, end, false)
			return
		}
		z.string(start, end, z.apart)
		return
	}
	if d > maxPath+1 || z.alive[d] == 0 {
		return
	}
	var m uint64
	for p, path := range z.s.Paths {
		if z.alive[d]&(1<<p) != 0 && len(path) >= d && keyIs(b[start:end], path[d-1]) {
			m |= 1 << p
		}
	}
	z.matched[d] = m
}

// value: a string value b[start:end], quoted, at depth d.
func (z *sizer) value(start, end, d int) {
	if z.region > 0 && d >= z.region {
		z.string(start, end, z.apart)
	}
}

func (z *sizer) string(start, end int, apart bool) {
	l := max(end-start-2, 0)
	if apart {
		z.sizes.Apart = max(z.sizes.Apart, l)
	} else {
		z.sizes.Strings = max(z.sizes.Strings, l)
	}
}

// comma: between two members or elements at depth d.
func (z *sizer) comma(d int) {
	if z.region > 0 && d >= z.region {
		z.entries[d-z.region]++
	}
}

// close: the object or array at depth d closed.
func (z *sizer) close(d int) {
	if z.region == 0 || d < z.region {
		return
	}
	k := d - z.region
	z.sizes.Entries = max(z.sizes.Entries, int(z.entries[k]))
	z.entries = z.entries[:k]
	if d == z.region {
		z.region, z.apart = 0, false
	}
}
