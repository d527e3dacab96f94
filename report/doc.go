// Package report renders a finished run as one self-contained HTML page with
// PNG plots beside it (html/template, gonum.org/v1/plot), and holds the exact
// t-SNE the maps of the embedding spaces use. It reads no files but the
// template it embeds and never logs: the report stage hands it the run's
// numbers.
//
// It owns the page and the pictures; what a number means is decided by the
// stages that compute it.
package report
