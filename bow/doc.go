// Package bow builds the bag-of-words item features of the paper's textual
// experiments (section V-D, "Bag-of-Words").
//
// Each review goes through: HTML unescaping; tokenising with the rules of
// prose's tokeniser; part-of-speech tagging (Penn tags) with prose/v2's
// averaged-perceptron model; lower-casing; dropping stop words; Snowball
// stemming. Stop words are snowball's English list plus, added here, every
// token without a letter (numbers, punctuation, symbols) and contractions
// the tokeniser leaves whole whose part before the apostrophe is a stop word
// ("i've", "you'd").
//
// Candidate terms are noun unigrams (NN, NNS, NNP, NNPS), adjective unigrams
// (JJ, JJR, JJS) and adjective-noun bigrams of adjacent tokens (adjacent in
// the text, both kept after stop-word removal), all in stemmed form: "Soft
// leather" gives "soft", "leather" and "soft leather". A stem tagged as a noun
// in one place and as an adjective in another is one term, of the kind it
// was tagged more often (noun on a tie). The vocabulary is the VocabSize
// (5000) most frequent candidates, ties broken by term string; term ids
// follow that order. An item's document is all its reviews: its vector
// holds the counts of vocabulary terms in them, normalised to sum to 1 (raw
// counts are kept, for LDA). Items without reviews, and items whose reviews
// contain no vocabulary term, get empty rows and are counted in Stats.
// DocFreq counts items, not reviews, for the same reason.
//
// # Tagging, and why not through prose's Document
//
// prose.NewDocument without prose.UsingModel decodes the 5 MB tagger model
// for every document (144 ms a review here); with a shared model and
// segmentation and extraction off it tags 40-100 k tokens/s on one core.
// It also has two defects that matter for a reproducible pipeline: scores
// are float sums in map order with ties broken in map order, so a token
// can get different tags in two runs; and its tokeniser shares one Token
// between repeated words of a text, so every occurrence reports the tag of
// the last one. This package decodes prose's embedded weights itself (they
// are all multiples of 0.001, so they become exact integers, sums do not
// depend on order, and a tie goes to the class listed first in the model),
// and evaluates the same feature templates with everything that depends on
// one word computed once per distinct word. On the 5,347 real 2018 reviews
// of the test samples its tokens equal prose's and its tags equal prose's
// (once prose's shared-token defect is accounted for) except one token at an
// exact tie. It tags several million tokens per CPU-second.
//
// # Passes, parallelism, determinism
//
// Build, Vectorize and CountShard take the reviews as an iterator
// (iter.Seq2[Doc, error], e.g. over amazon.Reviews) and range over it once:
// the caller's file is read in one pass, and an error it yields stops the
// call. They take a context first and look at it once per batch of 1024
// reviews read and per chunk of items counted, returning ctx.Err() when it
// is done (breaking out of the caller's loop, which closes its file).
// Which text a Doc holds (with the review's summary or not) is the caller's
// choice; the package counts whatever it is given.
//
// Build reads the reviews once. Workers take fixed batches of reviews,
// tokenise and tag each review once (short texts are memoised per worker:
// "Five Stars" and "Great gift!" recur verbatim) and reduce it to its
// candidate tokens, 4 bytes each (word id, noun/adjective, "pairs with the
// next"); batches are reassembled in input order. The vocabulary is then
// ranked from these candidates and every review's vocabulary hits are
// counted into its item's vector, without tagging again. Word ids depend on
// scheduling, but all outputs are sorted by strings or term ids, so results
// are byte-identical for any Workers. Memory: 4 bytes per candidate token,
// 13 per review, plus the distinct words.
//
// # Sampling
//
// Review number i (in input order) has a sampling level, the number of
// trailing zero bits of a hash of i (capped at 15): level >= s holds a fixed
// pseudo-random 2^-s of the reviews. When all reviews hold more than
// SampleTokens tokens (default 50 M), the vocabulary is counted on the
// reviews of the smallest level s whose tokens fit, i.e. on between about
// half and all of SampleTokens tokens; the vectors still count every review.
// Since every review is tagged once anyway for its vector, the sample saves
// counting work and the memory of the candidate table (distinct bigrams grow
// with the corpus), not tagging; the test TestSampleOverlap and
// BenchmarkSampleOverlap measure what it changes in the top terms.
//
// # Sharding
//
// CountShard counts the candidates of the reviews of one shard (by item, so
// an item's document stays whole), keeping counts per sampling level;
// Merge sums any complete set of shards and ranks exactly the vocabulary
// Build ranks, and Vectorize then computes the vectors, DocFreq and surface
// forms for a given vocabulary.
package bow
