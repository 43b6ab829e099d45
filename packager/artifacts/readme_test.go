package artifacts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMETable: the README's table ("Coming from aws cloudformation
// package or rain", "aws cloudformation package") has a row for every property packaged, naming its
// form.
func TestREADMETable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Coming from aws cloudformation package or rain\n\n### aws cloudformation package\n")
	if !ok {
		t.Fatal("README.md has no section Coming from aws cloudformation package or rain / aws cloudformation package")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	rows := map[string]string{}
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) >= 3 && strings.HasPrefix(cells[0], "| `") {
			rows[cells[0]] += cells[1] + " " + cells[2]
		}
	}
	forms := map[Form]string{S3URI: "s3://", BucketKey: "{", HTTPSURL: "https://"}
	for _, p := range Properties() {
		key := "| `" + p.Type + "`"
		if p.Metadata {
			key = "| `Metadata` `" + p.Type + "`"
		}
		row, ok := rows[key]
		if !ok {
			t.Errorf("README: no row for %s", p.Type)
			continue
		}
		if !strings.Contains(row, "`"+strings.Join(p.Path, ".")+"`") {
			t.Errorf("README: the row of %s does not name %s", p.Type, strings.Join(p.Path, "."))
		}
		if !strings.Contains(row, forms[p.Form]) {
			t.Errorf("README: the row of %s does not give its form %s", p.Type, forms[p.Form])
		}
		if p.Form == BucketKey && !strings.Contains(row, "{"+p.Bucket+", "+p.Key+"}") {
			t.Errorf("README: the row of %s does not name {%s, %s}", p.Type, p.Bucket, p.Key)
		}
	}
}
