// Package synth generates synthetic data in the exact formats of the Amazon
// product data set (2014 metadata, reviews, .b image features) with planted
// structure that the paper's models can find: a stand-in for the real files
// in tests, demos and scale runs.
//
// # Generative model
//
// Category tree. The root "Clothing, Shoes & Jewelry" has the configured tops
// (Men, Women, Boys, Girls, Baby), each with Subcats named subcategories
// ("Jackets & Coats", "Tops & Tees", ...), some with a third level (Shoes >
// Boots). Subcategory sizes are Zipf-like (weight (rank+2)^-0.9 over a random
// ranking). Besides the Items of each top the file holds items without an
// image record (NoImageFrac), items whose only path stops at the top
// (NoSubcatFrac), items of other categories (ForeignFrac, including paths
// such as "Sports & Outdoors > Clothing > Men > Shirts"), and some items
// carry a second path (SecondPathFrac).
//
// Text categories. The scales elect, auto, games, movies, office, home and
// phones (and table3, all seven) are the paper's Table 3 categories at its
// sizes: each a root of its own ("Electronics"), written to its own files
// (meta_Electronics.json.gz ...) with no .b file, its subcategories right
// below the root (Video Games, Movies & TV) or below a group ("Electronics >
// Camera & Photo > Tripods"). Items counts those with reviews (at least
// one each, mean the 2014 release's reviews per item); NoImageFrac adds items
// without reviews instead of items without images; there are no foreign
// items. The latent, relation and text models are the clothing world's.
//
// Latent factors, D = LatentDim (8), for item x of subcategory s:
//
//	mu_s ~ N(0, σ_s² I)    z_x = mu_s + σ_z ε,  ε ~ N(0, I)               (1)
//
// with σ_s = SubcatSpread (0.6) and σ_z = ItemSpread (1); σ = sqrt(σ_s²+σ_z²)
// is the latent's overall deviation. Foreign items have z ~ N(0, σ² I).
//
// Notions of also_bought: N = Notions (4) fixed orthogonal D×D transforms
// T_k with offsets c_k ~ N(0, (OffsetSpread·σ)² I), and a fixed random
// gate G (N×D). Every T_k keeps the first StyleDims (2) coordinates and
// rotates the others at random: the shared "style" gives a metric model
// something to hold on to, while the rotations are what only a mixture of
// non-metric embeddings can express.
//
//	k(x) = argmax_k (G z_x)_k                                             (3)
//
// Image features (F = FeatureDim, 4096), like ReLU FC7 activations:
//
//	f_x = 12 · h(max(0, W z_x + b + η) / σ_u),  η ~ N(0, (ν σ)² I)       (4)
//
// with W's rows random unit vectors, ν = FeatureNoise (0.5), σ_u =
// σ sqrt(1+ν²), b_j = -q_j σ_u where q_j ~ U[-0.25, 0.35] for 15 % of the
// dimensions (dense ones, firing for about half the items: without them a
// linear map recovers z poorly) and U[1.05, 1.9] for the rest, so 85-90 %
// of the entries are zero. h(x) = x up to 4 and 4 + (x-4)/(1+(x-4)) beyond,
// so values stay below 60 (FC7's maximum is 58.4). FeatureStep rounds the
// values (tiny uses 1/16 so the committed file compresses).
//
// Reviews. The review words are the nouns and adjectives of T = 20 topic
// lists (clothing flavoured, about 130 nouns and 100 adjectives). Every such
// word w has its own logit weights a_w ~ N(0, (TopicSharpness/σ)²/D · I)
// (TopicSharpness 4), and a noun slot of item x draws from
//
//	p_N(w | x) = softmax_w(a_w·z_x + h_w)                                 (5)
//
// over the nouns (adjective slots likewise over the adjectives), h_w a boost
// of 1.5 for the words of the topic of x's subcategory noun. So every
// topical word of a review is a noisy reading of the item's latent
// position, as every image dimension is (eq. 4), and a bag of words carries
// the planted relation as far as an item has words: the same latents, the
// same notions, the same edges as the images. A share PairedShare (0.2) of
// an item's sentences is about what it is bought with; their words are
// drawn at its also_bought target instead,
//
//	p'_N(w | x) = softmax_w(a_w·(T_k(x) z_x + c_k(x)))                    (5b)
//
// as real reviews mention what an item goes with. Related items share
// words through the style coordinates and 5b;
// docs/notes/2026-11-25-planted-text.md compares the share with real
// reviews'.
//
// Each review is 1-16 sentences (1 + Poisson(6)) from templates a POS
// tagger reads correctly ("The soft leather jacket fits well."); a
// template's adjective and noun slots take a word of the model above, or,
// 15 % of the time, a common filler word ("good", "product"), and the
// product slot the item's subcategory noun; 15 % of the sentences are
// fixed filler ("Shipping was fast."). Reviews per item follow a long
// tail: floor(exp(μ + s ε)) with s = ReviewsSpread (1) and μ set for a
// mean of ReviewsMean (12), so the median is 7, the 90th percentile about
// 3.6 times the median (as on real samples) and 2-3 % of items get none.
//
// Planted relations. Out-degrees are negative binomial (shape 1/2, capped at
// 100) with the top's AlsoBought / AlsoViewed mean (paper Table 1). Each edge
// from x picks its endpoint among M = Candidates items of x's top drawn
// uniformly from subcategories other than x's:
//
//	also_bought  y = argmin_{y in C} ||z_y − (T_k(x) z_x + c_k(x))||²      (6)
//	also_viewed  y = argmin_{y in C} ||z_y − z_x||²                       (7)
//
// except that a fraction EdgeNoise of endpoints is a uniform candidate.
// also_bought is non-metric and a mixture: x's latent picks the transform,
// so no single embedding distance explains it, while Monomer's
// d(x,y) = Σ_k P(k|x) ||E_0ᵀf_x − E_kᵀf_y||² can. also_viewed links similar
// items. bought_together is a prefix (0-3 entries) of the written
// also_bought list.
//
// Written lists add, at random places, ASINs that are in no file
// (MissingRelated per list), items outside the experiment (other tops or
// categories, no subcategory), and now and then an item of x's own
// subcategory, x itself, or a repeated entry; World.Edges holds only the
// planted edges, which is what ingest must keep.
//
// # File formats
//
// Metadata lines are Python 2 repr dicts in shuffled key order, strings in
// single quotes or, when they contain ' and no ", double quotes; \\ \' \n \r
// \t escapes, \xNN for other control characters; non-ASCII characters, per
// line, raw UTF-8, or as a Python 2 unicode repr writes them (\xNN below
// U+0100, \uNNNN above), or as a byte-string repr does (\xNN per UTF-8
// byte); titles, brands and category
// names carry HTML entities (&amp; &quot; &#x92; &eacute; &nbsp; and the
// bogus &B;); fields brand, price, salesRank, imUrl, related, title and
// description are sometimes absent; ASINs are B0 and 8 base-36 characters,
// or (ISBNFrac) ISBN-10s whose check digit may be X. Reviews are JSON lines
// as Python's json.dumps writes them (\uNNNN for non-ASCII). The .b file
// holds one record per item with an image, plus a few whose ASIN is not in
// the metadata, in an order unrelated to the metadata's.
//
// # The 2023 layout
//
// Write2023 writes the same world as the 2023 release is laid out
// (meta_<name>.jsonl.gz, <name>.jsonl.gz, items keyed by parent_asin, no
// related lists) with the image features as an embeddings table
// (embeddings_<name>.parquet). The planted also_bought relation is then
// only in the reviews: each edge x → y has 1 + Poisson(2) buyers who
// review x and then y an hour to three weeks later, on top of every
// item's ordinary reviews (release2023.go).
//
// # Determinism
//
// Every random choice comes from a PCG stream keyed by (seed, purpose,
// item), so a World and its files depend only on the Config and the seed,
// not on GOMAXPROCS or WriteOptions.Workers; gzip members carry no name or
// time. Nothing but latents and edges is held in memory: features, lines
// and reviews are regenerated per item when needed.
package synth
