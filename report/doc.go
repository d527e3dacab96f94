// Package report lays out a finished run and renders it: Assemble turns
// what the report stage read of one experiment's tables (an Input) into the
// experiment's part of the page and of the job's metrics table, beside the
// paper's published figures (PaperFor), projecting items into the
// embedding models' spaces for the maps, the gate and the dimension
// tables; Markdown and Write render the page as tables.md and as one
// self-contained HTML page with PNG plots beside it (html/template,
// gonum.org/v1/plot), with the exact t-SNE the maps use. Write is
// WriteSection, the pictures of one experiment (the costly part, which
// the report-section stage runs per experiment), for each experiment, then
// WritePage, which assembles drawn sections into index.html.
//
// It reads no files but the template it embeds and never logs: the report
// stage reads the run's tables and writes what this package returns. The
// models it shows and their order and titles come from the models
// registry (models.Models).
package report
