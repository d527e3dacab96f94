// Package rawio opens the raw input files of the amazon and imagefeat
// readers: plain or gzip-compressed, told apart by the gzip magic bytes
// whatever the file's name says, with a compressed stream inflated ahead of
// the reader on another core, and with errors of the file kept apart from
// damage to the compressed stream.
//
// Errors carry no package prefix and no file name: each caller words them
// and wraps its own sentinel.
package rawio
