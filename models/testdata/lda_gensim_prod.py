# Writes lda_gensim_prod.json.gz, the reference TestLDAMatchesGensimFromProduction
# compares FitLDA against: gensim's LdaModel (float64, default options) on
# the corpus of lda_gensim.json.gz, started and run with the random numbers
# FitLDA draws itself (seed 1) instead of numpy's: lda_prod_draws.json.gz,
# written by `go test ./models -run TestWriteLDADraws -args -write-lda-draws`,
# holds the initial lambda and the starting gamma of every row for each pass
# and for inference. gensim asks its generator for one (rows, topics) block
# of gammas per chunk (per document in bound and get_document_topics); the
# replay hands out the rows in the order gensim visits them and checks that
# every number was used. Run: python3 lda_gensim_prod.py (gensim 4.4.0 and
# numpy were used).
import gzip, json
import numpy as np
import gensim
from gensim.models import LdaModel
from gensim.matutils import dirichlet_expectation, sparse2full

with gzip.open("lda_gensim.json.gz", "rt") as f:
    corpus = [[tuple(p) for p in d] for d in json.load(f)["docs"]]
with gzip.open("lda_prod_draws.json.gz", "rt") as f:
    draws = json.load(f)
K, CHUNK = draws["topics"], draws["chunksize"]
V = len(draws["init"][0])


class Replay:
    """Hands out recorded gamma rows in order; nothing else may be drawn."""

    def __init__(self, rows):
        self.rows = list(rows)

    def gamma(self, shape, scale, size):
        assert (shape, scale) == (100.0, 0.01) and size[1] == K, (shape, scale, size)
        out, self.rows = np.array(self.rows[: size[0]]), self.rows[size[0]:]
        assert out.shape == tuple(size), "ran out of recorded draws"
        return out

    def rand(self, n):
        # Only show_topics (the M-step's log line) draws these, to order
        # topics for display: no effect on the model.
        return np.zeros(n)


out = {"gensim": gensim.__version__, "runs": []}
for passes in (1, 3):
    m = LdaModel(id2word={i: str(i) for i in range(V)}, num_topics=K, chunksize=CHUNK,
                 passes=passes, eval_every=None, dtype=np.float64, random_state=1)
    m.state.sstats[...] = np.array(draws["init"])
    m.expElogbeta = np.exp(dirichlet_expectation(m.state.sstats))
    fit = [row for p in range(passes) for row in draws["fit"][p]]  # rows in corpus order per pass
    m.random_state = Replay(fit)
    m.update(corpus)
    assert not m.random_state.rows, "fit draws left over"
    m.random_state = Replay(draws["infer"])  # bound: one document at a time
    log_perplexity = m.log_perplexity(corpus)
    assert not m.random_state.rows, "inference draws left over"
    m.random_state = Replay(draws["infer"][:20])
    doc_topics = [sparse2full(m.get_document_topics(d), K).tolist() for d in corpus[:20]]
    out["runs"].append({"passes": passes, "sstats": m.state.sstats.tolist(),
                        "log_perplexity": log_perplexity, "doc_topics": doc_topics})
with gzip.open("lda_gensim_prod.json.gz", "wt") as f:
    json.dump(out, f)
