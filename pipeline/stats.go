package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// normalizeStats gives a stage's Result.Stats one form for the manifest and
// the log: plain JSON values with snake_case keys throughout, whatever
// library stats structs (with Go field names) a stage put in.
func normalizeStats(stats map[string]any) map[string]any {
	if stats == nil {
		return nil
	}
	out, _ := statsOf(stats).(map[string]any)
	return out
}

func statsOf(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var x any
	if d.Decode(&x) != nil {
		return fmt.Sprint(v)
	}
	return snakeKeys(x)
}

func snakeKeys(x any) any {
	switch v := x.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[snake(k)] = snakeKeys(e)
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = snakeKeys(e)
		}
		return v
	}
	return x
}

// snake converts a Go field name: an underscore before each capital that
// follows a lower-case letter or digit, then lower case ("DuplicateASINs"
// becomes "duplicate_asins").
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			p := rune(s[i-1])
			if unicode.IsLower(p) || unicode.IsDigit(p) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
