package nofetch

import "testing"

func TestFetches(t *testing.T) {
	for _, tt := range []struct {
		page  string
		fetch bool
	}{
		{`<p>text</p><a href="#run">run</a>`, false},
		{`<svg xmlns="http://www.w3.org/2000/svg"><path data-series="&lt;img src=//x&gt;" d="M0 0"/></svg>`, false},
		{`<p>see https://example.com and src=//x</p>`, false},
		{`<script>alert(1)</script>`, true},
		{`<SCRIPT src=x.js></SCRIPT>`, true},
		{`<img src="a.png">`, true},
		{`<link rel="stylesheet" href="s.css">`, true},
		{`<a href="https://example.com">x</a>`, true},
		{`<a href=//example.com>x</a>`, true},
		{`<svg><use xlink:href="sprite.svg#a"/></svg>`, true},
		{`<svg><image href="x.png"/></svg>`, true},
		{`<div style="background:url(x.png)">`, true},
		{`<style>@import "x.css";</style>`, true},
		{`<style>@font-face{font-family:x}</style>`, true},
		{`<meta http-equiv="refresh" content="0;url=x">`, true},
	} {
		tag, what := Fetches(tt.page)
		if got := tag != ""; got != tt.fetch {
			t.Errorf("Fetches(%q) = %q, %q; want a fetch: %v", tt.page, tag, what, tt.fetch)
		}
	}
}
