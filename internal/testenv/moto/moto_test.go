package moto

import (
	"net/http"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

func TestEndpointAnswers(t *testing.T) {
	e := Env(t)
	resp, err := http.Get(e + "/moto-api/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("moto-api: %s", resp.Status)
	}
}
