// Command sett-bench-browsers plays browsers on the web console's live
// workflow list for the bench's console step (bench/scenario_console.go):
// each holds the event stream open and, as the page's script does, fetches
// the list again 250 ms after a change, at most once a second while
// changes keep coming. It prints
// "connected N" once every stream is open, runs until its stdin closes,
// then prints "fetches N" (the list pages fetched) and exits.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	base := flag.String("url", "", "the console's base URL (http://127.0.0.1:7070)")
	token := flag.String("token", "", "the console's access token")
	n := flag.Int("n", 50, "browsers")
	flag.Parse()
	if *base == "" || *token == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: sett-bench-browsers -url URL -token TOKEN [-n 50]")
		os.Exit(2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *n * 2}}
	var fetches atomic.Int64
	var wg sync.WaitGroup
	connected := make(chan error, *n)
	for range *n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			browse(ctx, client, strings.TrimRight(*base, "/"), *token, connected, &fetches)
		}()
	}
	for range *n {
		if err := <-connected; err != nil {
			fmt.Fprintln(os.Stderr, "sett-bench-browsers:", err)
			os.Exit(1)
		}
	}
	fmt.Printf("connected %d\n", *n)
	_, _ = io.Copy(io.Discard, os.Stdin)
	cancel()
	wg.Wait()
	fmt.Printf("fetches %d\n", fetches.Load())
}

// browse is one browser on the list page: it opens the event stream
// (reporting on connected once it is open) and refetches the page as
// console.js does, until ctx ends.
func browse(ctx context.Context, client *http.Client, base, token string, connected chan<- error, fetches *atomic.Int64) {
	get := func(path string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		return client.Do(req)
	}
	resp, err := get("/events")
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("console /events answered %s", resp.Status)
	}
	connected <- err
	if err != nil {
		return
	}
	defer resp.Body.Close()
	changed := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data:") {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}
	}()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		wait := max(250*time.Millisecond, time.Second-time.Since(last))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		last = time.Now()
		page, err := get("/")
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			continue
		}
		_, _ = io.Copy(io.Discard, page.Body)
		page.Body.Close()
		fetches.Add(1)
	}
}
