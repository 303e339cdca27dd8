// Command bench measures tollgate's review paths side by side with a floor
// (a Go HTTPS server that decodes only the uid) and a typical typed webhook,
// on the same requests, over HTTPS keep-alive connections, and the latency
// tollgate adds to Pod creates through a real kube-apiserver. It prints a
// Markdown report; ratios are to the floor measured in the same run.
package main

import (
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/internal/certs"
	"github.com/tollgate-dev/tollgate/internal/policy"
)

type contender struct {
	name string
	url  string
	// more are the other webhooks a Pod is sent to when one webhook is not
	// enough (a policy set registered as several): the throughput sends
	// url and more in turn and counts a decision per len(more)+1 reviews;
	// the latency runs, per review, leave such a contender out.
	more []string
}

// reviews is how many reviews decide one object.
func (c contender) reviews() int { return 1 + len(c.more) }

func main() {
	root := flag.String("root", "../..", "the tollgate repository")
	duration := flag.Duration("duration", 4*time.Second, "length of each measurement")
	workers := flag.Uint64("concurrency", 16, "connections for the throughput runs")
	rates := flag.String("rates", "1000,2000,5000", "fixed request rates for the latency runs")
	e2e := flag.Int("e2e-creates", 300, "Pod creates per side for the apiserver overhead (0: skip)")
	only := flag.String("only", "load,seed,memory,apiserver", "the parts to run, comma-separated: load (throughput and latency), seed (the seed paths and the floor, interleaved), memory, apiserver (Pod creates)")
	soakFor := flag.Duration("soak", 0, "instead of the benchmark: a soak of this length (make soak)")
	soakRate := flag.Int("soak-rate", 1000, "reviews per second of the soak")
	flag.Parse()
	if *soakFor > 0 {
		if err := soak(os.Stdout, *root, *soakFor, *soakRate); err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
		return
	}
	parts := map[string]bool{}
	for _, p := range strings.Split(*only, ",") {
		parts[strings.TrimSpace(p)] = true
	}
	if err := run(*root, *duration, *workers, *rates, *e2e, parts); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(root string, d time.Duration, workers uint64, rateList string, e2eCreates int, parts map[string]bool) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "tollgate-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ss, roots, err := selfSigned(dir)
	if err != nil {
		return err
	}
	src, err := certs.NewFileSource(ss.CertPath(), ss.KeyPath(), time.Hour, nil)
	if err != nil {
		return err
	}

	defaults, err := policy.LoadDefaults()
	if err != nil {
		return err
	}
	var cs []contender
	add := func(name string, h http.Handler, path string, more ...string) error {
		base, err := serveTLS(ctx, src, h)
		if err != nil {
			return err
		}
		c := contender{name: name, url: base + path}
		for _, p := range more {
			c.more = append(c.more, base+p)
		}
		cs = append(cs, c)
		return nil
	}
	if err := add("floor", floor(), "/"); err != nil {
		return err
	}
	if err := add("typical typed webhook", typical(), "/"); err != nil {
		return err
	}
	tg, err := tollgate(defaults, src)
	if err != nil {
		return err
	}
	if err := add("tollgate validate (defaults)", tg, "/validate/require-environment"); err != nil {
		return err
	}
	if err := add("tollgate mutate (defaults)", tg, "/mutate/nginx-sidecar"); err != nil {
		return err
	}
	if parts["load"] { // the memory and apiserver parts need only the defaults
		if err := addMany(root, src, add); err != nil {
			return err
		}
	}
	bs, err := bodies(root)
	if err != nil {
		return err
	}
	for _, c := range cs {
		for _, b := range bs {
			for _, url := range append([]string{c.url}, c.more...) {
				if err := check(roots, url, b.data); err != nil {
					return fmt.Errorf("%s, %s: %w", c.name, b.name, err)
				}
			}
		}
	}

	out := os.Stdout
	if parts["load"] {
		loadReport(out, cs, bs, roots, d, workers, rateList)
	}
	if parts["seed"] {
		seedRounds(out, cs, bs, roots, d/4, workers, 8)
	}
	if parts["memory"] {
		if err := memory(out, root, dir, roots, bs[0].data, ss.CertPath(), ss.KeyPath(), 10*time.Second); err != nil {
			return fmt.Errorf("memory: %w", err)
		}
	}
	if parts["apiserver"] && e2eCreates > 0 {
		if err := apiserverOverhead(ctx, out, root, src, roots, filepath.Join(dir, certs.CAFile), e2eCreates); err != nil {
			return fmt.Errorf("apiserver overhead: %w", err)
		}
	}
	return nil
}

// loadReport measures every contender's throughput on every body and its
// latency at fixed rates on the captured Pod.
func loadReport(out io.Writer, cs []contender, bs []body, roots *x509.CertPool, d time.Duration, workers uint64, rateList string) {
	fmt.Fprintf(out, "## Load (%s, GOMAXPROCS %d, %s per run, load generator in the same process)\n\n", time.Now().UTC().Format("2006-01-02"), runtime.GOMAXPROCS(0), d)
	fmt.Fprintf(out, "### Throughput at %d keep-alive connections (requests/s, or objects decided/s where one takes several reviews; ratio to the floor)\n\n", workers)
	fmt.Fprintf(out, "| contender |")
	for _, b := range bs {
		fmt.Fprintf(out, " %s |", b.name)
	}
	fmt.Fprintf(out, "\n|---|%s\n", strings.Repeat("---|", len(bs)))
	floorRPS := make([]float64, len(bs))
	for _, c := range cs {
		fmt.Fprintf(out, "| %s |", c.name)
		for i, b := range bs {
			urls := append([]string{c.url}, c.more...)
			measureAll(roots, urls, b.data, 0, workers, time.Second) // warm up
			r := measureAll(roots, urls, b.data, 0, workers, d)
			if c.name == "floor" {
				floorRPS[i] = r.rps
			}
			per := r.rps / float64(c.reviews())
			fmt.Fprintf(out, " %.0f (%.2fx)%s |", per, per/floorRPS[i], errNote(r))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "\n### Latency at fixed rates, captured Pod (p50 / p99 / p99.9)\n\n| contender |")
	var rs []int
	for _, f := range strings.Split(rateList, ",") {
		var r int
		fmt.Sscan(f, &r)
		rs = append(rs, r)
		fmt.Fprintf(out, " %d/s |", r)
	}
	fmt.Fprintf(out, "\n|---|%s\n", strings.Repeat("---|", len(rs)))
	for _, c := range cs {
		if c.reviews() > 1 {
			continue
		}
		fmt.Fprintf(out, "| %s |", c.name)
		for _, rate := range rs {
			r := measure(roots, c.url, bs[0].data, rate, 64, d)
			fmt.Fprintf(out, " %s / %s / %s%s |", ms(r.p50), ms(r.p99), ms(r.p999), achieved(r, rate, d))
		}
		fmt.Fprintln(out)
	}
}

func check(roots *x509.CertPool, url string, data []byte) error {
	r := measure(roots, url, data, 1, 1, 50*time.Millisecond)
	if r.errors > 0 || r.requests == 0 {
		return fmt.Errorf("the contender does not answer 200")
	}
	return nil
}

func errNote(r result) string {
	if r.errors > 0 {
		return fmt.Sprintf(" [%d errors]", r.errors)
	}
	return ""
}

// achieved flags a run whose generator could not keep the rate.
func achieved(r result, rate int, d time.Duration) string {
	want := float64(rate) * d.Seconds()
	if float64(r.requests) < 0.95*want || r.errors > 0 {
		return fmt.Sprintf(" [sent %d of %.0f, %d errors]", r.requests, want, r.errors)
	}
	return ""
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
