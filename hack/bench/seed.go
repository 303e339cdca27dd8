package main

import (
	"crypto/x509"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// seedRounds measures the floor and tollgate's seed paths (validate and
// mutate on the defaults) interleaved: in each round every contender runs
// for a slice in turn, on every body, so that a machine shared with other
// work slows each alike. It reports, per body, the ratio of each contender's
// requests to the floor's over all rounds, and the lowest and highest ratio
// of a single round.
func seedRounds(out io.Writer, cs []contender, bs []body, roots *x509.CertPool, slice time.Duration, workers uint64, rounds int) {
	var seed []contender
	for _, c := range cs {
		if c.name == "floor" || strings.HasSuffix(c.name, "(defaults)") {
			seed = append(seed, c)
		}
	}
	fmt.Fprintf(out, "\n### Seed paths, interleaved (%d rounds of %s per contender and body, %d keep-alive connections; ratio to the floor over all rounds, [lowest–highest round])\n\n", rounds, slice, workers)
	fmt.Fprintf(out, "| contender |")
	for _, b := range bs {
		fmt.Fprintf(out, " %s |", b.name)
	}
	fmt.Fprintf(out, "\n|---|%s\n", strings.Repeat("---|", len(bs)))
	total := make([][]uint64, len(seed))     // [contender][body] requests
	ratios := make([][][]float64, len(seed)) // [contender][body][round]
	for i := range seed {
		total[i] = make([]uint64, len(bs))
		ratios[i] = make([][]float64, len(bs))
	}
	for _, c := range seed {
		for _, b := range bs {
			measure(roots, c.url, b.data, 0, workers, time.Second) // warm up
		}
	}
	for r := range rounds {
		for j, b := range bs {
			n := make([]uint64, len(seed))
			for k := range seed {
				i := (k + r) % len(seed) // each contender first in turn
				n[i] = measure(roots, seed[i].url, b.data, 0, workers, slice).requests
				total[i][j] += n[i]
			}
			for i := range seed {
				ratios[i][j] = append(ratios[i][j], float64(n[i])/float64(n[0]))
			}
		}
	}
	for i, c := range seed {
		fmt.Fprintf(out, "| %s |", c.name)
		for j := range bs {
			rs := ratios[i][j]
			fmt.Fprintf(out, " %.0f/s (%.2fx) [%.2f–%.2f] |", float64(total[i][j])/(slice.Seconds()*float64(rounds)),
				float64(total[i][j])/float64(total[0][j]), slices.Min(rs), slices.Max(rs))
		}
		fmt.Fprintln(out)
	}
}
