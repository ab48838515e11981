// check_and_add.go — a crawler's call to `neardup serve` from Go with the
// standard library alone (net/http, encoding/json): store a page unless a
// near-duplicate is stored. Run: go run check_and_add.go URL KEY TEXT-FILE
// (NEARDUP_TOKEN in the environment: the bearer token, when the server
// has --token-file). Prints "new" or "duplicate of KEY (distance D)".
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"
)

type request struct {
	Key  string `json:"key"`
	Text string `json:"text"`
}

type answer struct {
	New   bool `json:"new"`
	Match *struct {
		Key      string `json:"key"`
		Distance int    `json:"distance"`
	} `json:"match"`
	Error *struct {
		Status  int    `json:"status"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go run check_and_add.go URL KEY TEXT-FILE")
		os.Exit(1)
	}
	text, err := os.ReadFile(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	body, _ := json.Marshal(request{Key: os.Args[2], Text: string(text)})
	rq, err := http.NewRequest("POST", os.Args[1]+"/v1/check-and-add", bytes.NewReader(body))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rq.Header.Set("Content-Type", "application/json")
	if token := os.Getenv("NEARDUP_TOKEN"); token != "" {
		rq.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	r, err := client.Do(rq)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer r.Body.Close()
	var a answer
	if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
		fmt.Fprintln(os.Stderr, "neardup serve: not JSON:", err)
		os.Exit(2)
	}
	if r.StatusCode != http.StatusOK || a.Error != nil {
		fmt.Fprintf(os.Stderr, "neardup serve: %d %+v\n", r.StatusCode, a.Error)
		os.Exit(2)
	}
	if a.New {
		fmt.Println("new")
	} else {
		fmt.Printf("duplicate of %s (distance %d)\n", a.Match.Key, a.Match.Distance)
	}
}
