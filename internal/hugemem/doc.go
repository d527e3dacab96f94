// Package hugemem allocates large slices that the kernel may back with 2 MB
// pages (transparent huge pages asked for with madvise where the system
// leaves them to the program). The models' per-item and per-pair arrays
// (rows of P and G, hundreds of MB at the paper's sizes) are read at random
// rows; with 4 KB pages nearly every such read also misses the TLB.
package hugemem
