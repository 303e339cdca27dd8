package main

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// result is one measurement.
type result struct {
	rps                 float64
	p50, p99, p999, max time.Duration
	errors              int
	requests            uint64
}

func attacker(roots *x509.CertPool, workers uint64) *vegeta.Attacker {
	return vegeta.NewAttacker(
		vegeta.TLSConfig(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}),
		vegeta.KeepAlive(true),
		vegeta.HTTP2(false),
		vegeta.Workers(workers),
		vegeta.MaxWorkers(workers),
		vegeta.Connections(int(workers)),
		vegeta.MaxConnections(int(workers)),
		vegeta.Timeout(10*time.Second),
	)
}

// measure attacks url with the body, at rate (0: as fast as the workers go).
func measure(roots *x509.CertPool, url string, data []byte, rate int, workers uint64, d time.Duration) result {
	return measureAll(roots, []string{url}, data, rate, workers, d)
}

// measureAll attacks the urls in turn with the body; rate and the results
// count requests, whichever url they went to.
func measureAll(roots *x509.CertPool, urls []string, data []byte, rate int, workers uint64, d time.Duration) result {
	var targets []vegeta.Target
	for _, url := range urls {
		targets = append(targets, vegeta.Target{Method: http.MethodPost, URL: url, Body: data, Header: http.Header{"Content-Type": []string{"application/json"}}})
	}
	a := attacker(roots, workers)
	var pacer vegeta.Pacer = vegeta.ConstantPacer{Freq: rate, Per: time.Second}
	if rate == 0 {
		pacer = vegeta.ConstantPacer{} // zero: no pacing, workers run flat out
	}
	var m vegeta.Metrics
	for res := range a.Attack(vegeta.NewStaticTargeter(targets...), pacer, d, "bench") {
		m.Add(res)
	}
	m.Close()
	return result{
		rps: m.Throughput, p50: m.Latencies.P50, p99: m.Latencies.P99, p999: m.Latencies.Quantile(0.999), max: m.Latencies.Max,
		errors: int(m.Requests) - int(float64(m.Requests)*m.Success), requests: m.Requests,
	}
}
