// Package nofetch checks that an HTML or SVG page loads nothing: what
// the report tests assert of every page they render.
package nofetch

import (
	"regexp"
	"strings"
)

var (
	tagRe  = regexp.MustCompile(`<[^>]*>`)
	nameRe = regexp.MustCompile(`^<\s*/?\s*([A-Za-z][A-Za-z0-9:-]*)`)
	attrRe = regexp.MustCompile(`\s([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+)`)
)

// loading names the elements that load a resource, and loads the
// attributes that name one.
var (
	loading = map[string]bool{"script": true, "link": true, "img": true, "iframe": true, "frame": true, "object": true, "embed": true,
		"image": true, "use": true, "video": true, "audio": true, "source": true, "track": true, "input": true, "base": true, "meta": false}
	loads = map[string]bool{"src": true, "srcset": true, "href": true, "xlink:href": true, "data": true, "action": true, "poster": true,
		"background": true, "formaction": true, "ping": true}
)

// Fetches reports the first thing in an HTML or SVG text that would make a
// viewer load something: an element that loads (script, link, img, ...),
// an attribute naming a resource other than an anchor of the page itself
// (href="#id"), a CSS @import or url(). It returns the tag (or the CSS
// text) and what it names; "", "" when there is none. Text is expected to
// be escaped ('<' as &lt;), as the report writes it, so every '<' opens a
// tag.
func Fetches(page string) (tag, what string) {
	for _, t := range tagRe.FindAllString(page, -1) {
		if m := nameRe.FindStringSubmatch(t); m != nil && loading[strings.ToLower(m[1])] {
			return t, m[1]
		}
		for _, a := range attrRe.FindAllStringSubmatch(t, -1) {
			name := strings.ToLower(a[1])
			v := strings.Trim(a[2], `"'`)
			if loads[name] && !strings.HasPrefix(v, "#") {
				return t, v
			}
			if name == "style" && cssFetches(v) {
				return t, v
			}
			if name == "http-equiv" {
				return t, v
			}
		}
	}
	// Style elements.
	for _, css := range regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(page, -1) {
		if cssFetches(css[1]) {
			return "<style>", css[1]
		}
	}
	return "", ""
}

func cssFetches(css string) bool {
	l := strings.ToLower(css)
	return strings.Contains(l, "@import") || strings.Contains(l, "url(") || strings.Contains(l, "@font-face")
}
