# Writes lda_gensim.json.gz, the reference TestLDAMatchesGensim compares
# FitLDA against: gensim's LdaModel (run with 4.2.0, float64) on a small
# planted corpus, from a fixed initial lambda and with every document's
# initial gamma set to 1 instead of a random draw, so that both sides follow
# the same trajectory. Run: python3 lda_gensim.py (needs gensim, numpy).
import gzip, json
import numpy as np
import gensim
from gensim.models import LdaModel
from gensim.matutils import dirichlet_expectation, sparse2full

V, K, DOCS, CHUNK = 120, 6, 600, 100
rs = np.random.RandomState(6)
topics = np.full((K, V), 0.05 / V)
for t in range(K):
    own = np.arange(t * 15, t * 15 + 15)
    topics[t, own] += 0.95 / 15
corpus = []
for _ in range(DOCS):
    mix = rs.dirichlet(np.full(K, 0.3))
    words = rs.choice(V, size=rs.randint(20, 80), p=mix @ topics)
    ids, cnts = np.unique(words, return_counts=True)
    corpus.append([(int(i), int(c)) for i, c in zip(ids, cnts)])
init = rs.gamma(100.0, 1.0 / 100.0, (K, V))


class UnitGamma:
    def gamma(self, shape, scale, size):
        return np.ones(size)

    def rand(self, n):
        return np.zeros(n)


out = {"gensim": gensim.__version__, "vocab": V, "topics": K, "chunksize": CHUNK,
       "docs": [[list(p) for p in d] for d in corpus], "init": init.tolist(), "runs": []}
for passes in (1, 3):
    m = LdaModel(id2word={i: str(i) for i in range(V)}, num_topics=K, chunksize=CHUNK,
                 passes=passes, eval_every=None, dtype=np.float64, random_state=1)
    m.random_state = UnitGamma()
    m.state.sstats[...] = init
    m.expElogbeta = np.exp(dirichlet_expectation(m.state.sstats))
    m.update(corpus)
    out["runs"].append({
        "passes": passes,
        "sstats": m.state.sstats.tolist(),
        "log_perplexity": m.log_perplexity(corpus),
        "doc_topics": [sparse2full(m.get_document_topics(d), K).tolist() for d in corpus[:20]],
    })
with gzip.open("lda_gensim.json.gz", "wt") as f:
    json.dump(out, f)
