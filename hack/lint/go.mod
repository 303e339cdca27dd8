// Module lint pins staticcheck (honnef.co/go/tools), which make lint builds
// into the cache dir and runs on the whole tree. It is separate from the main
// module so that the linter's dependencies stay out of tollgate's. Its go line
// is tollgate's: staticcheck refuses code whose go line is newer than the Go
// it was built with.
module github.com/tollgate-dev/tollgate/hack/lint

go 1.27.3

require honnef.co/go/tools v0.8.2

require (
	github.com/BurntSushi/toml v1.4.1-0.20240526193622-a339e1f7089c // indirect
	golang.org/x/exp/typeparams v0.0.0-20231108232855-2478ac86f678 // indirect
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
)
