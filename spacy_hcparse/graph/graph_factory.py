"""The ``hc_parser`` factory and its defaults, defined here once: the ``default_config`` (what
``nlp.add_pipe("hc_parser")`` builds, and what a config leaves out gets). Python code builds the
component through the factory, so ``GraphParser`` itself has no defaults to disagree with these.
"""
from typing import Callable, Optional

from spacy.language import Language
from thinc.api import Config, Model

from ..compiling import watch_compiling
from .ahead import compile_ahead
from .graph_loss import GraphLoss
from .graph_parser import GraphParser
from .labeling import Labeler

DEFAULT_CONFIG = """
[model]
@architectures = "spacy_hcparse.GraphParserModel.v8"
max_length = 100
top_k = 6
higher_order_max_length = 100

[model.context]
@architectures = "spacy_hcparse.BiLSTMContext.v1"
width = 128
depth = 1
dropout = 0.1

[model.arc_scorer]
@architectures = "spacy_hcparse.BiaffineArcScorer.v1"
width = 192
dropout = 0.1

[model.sibling_scorer]
@architectures = "spacy_hcparse.SiblingScorer.v1"
rank = 48
dropout = 0.1

[model.grand_scorer]
@architectures = "spacy_hcparse.GrandparentScorer.v1"
rank = 48
dropout = 0.1

[model.label_scorer]
@architectures = "spacy_hcparse.LowRankLabelScorer.v1"
width = 96
rank = 128
dropout = 0.1

[model.start_scorer]
@architectures = "spacy_hcparse.SentenceStartScorer.v1"
width = 64
dropout = 0.1

[model.tags]
@architectures = "spacy_hcparse.TagScorers.v1"
attrs = ["POS"]
from_context = true

[model.tok2vec]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 96
depth = 2
embed_size = 2000
window_size = 1
maxout_pieces = 3
subword_features = true

[decoder]
@misc = "spacy_hcparse.Eisner.v1"

[loss]
@misc = "spacy_hcparse.GraphLoss.v1"
hinge_weight = 1.0
xent_weight = 1.0
label_weight = 1.0
per_word = false
start_weight = 1.0
tag_weight = 1.0

[loss.decoder]
@misc = "spacy_hcparse.HillClimb.v1"
max_restarts = 6
min_restarts = 2
converge = 2
uniform_share = 0.0
time_limit = 0.5
seed = 0
"""

SETTINGS = {"init_from_doc": False, "doc_arc_bonus": 0.0, "keep_doc_labels": False, "label_valency": True,
            "head_probs": True, "prob_temperature": None, "set_tags": True, "cpu_blas": "numpy", "threads": 1,
            "scorer": {"@scorers": "spacy_hcparse.parser_scorer.v1"}, "projectivize": False,
            "label_freq_cutoff": 30}
FACTORY_CONFIG = {**Config().from_str(DEFAULT_CONFIG), **SETTINGS}
SCORE_WEIGHTS = {"dep_uas": 0.5, "dep_las": 0.5, "dep_las_per_type": None, "sents_p": None, "sents_r": None,
                 "sents_f": 0.0, "ud_uas": None, "ud_las": None, "ud_las_per_type": None}


@Language.factory(
    "hc_parser",
    assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents", "token.pos", "token.tag"],
    default_config=FACTORY_CONFIG,
    default_score_weights=SCORE_WEIGHTS,
)
def make_graph_parser(nlp: Language, name: str, model: Model, decoder: Callable, loss: GraphLoss, init_from_doc: bool,
                      doc_arc_bonus: float, keep_doc_labels: bool, label_valency: bool, head_probs: bool,
                      prob_temperature: Optional[float], set_tags: bool, scorer: Optional[Callable], cpu_blas: str,
                      threads: int, projectivize: bool, label_freq_cutoff: int) -> "GraphParser":
    """The component; its defaults are ``FACTORY_CONFIG`` above, and only there. Its kernels'
    compiling, when slow, is said on stderr (``compiling``); on a fresh install a second process
    compiles them ahead (``ahead``).

    decoder: a decoder object (``graph.decoding``: ``Eisner.v1``, ``MST.v1``, ``MBR.v1``,
        ``HillClimb.v1``/``.v2``, ``Dual.v1``, ``Certified.v1``); it names the factors it reads, and
        only those are scored.
    loss: the training objective (``spacy_hcparse.GraphLoss.v1``) with its cost-augmented decoder.
    label_valency: the labeler (``graph.labeling.Labeler``) gives each tree at most one child per
        head from each label class ``initialize`` learns (``cfg["label_classes"]``,
        ``graph.valency``).
    keep_doc_labels: the labeler keeps an earlier parser's label where the decoded head is that
        parser's.
    init_from_doc: when the doc already has a parse (e.g. from ``hc_transition_parser`` earlier in
        the pipeline), hill climbing also considers that tree as its first start. The parse is
        then overwritten.
    doc_arc_bonus: when the doc already has a parse, its arcs stay candidates and their scores
        are raised by this much before decoding (reparsing, Sagae & Lavie 2006). 0 = off.
    head_probs: write ``token._.hc_head_prob`` and ``span._.hc_parse_prob``, the chosen heads'
        marginal probabilities and the tree's probability under the model the decoder maximizes
        (with siblings for Eisner and projective MBR, else the matrix-tree theorem), calibrated:
        at each evaluation in training (``score`` after an ``update``) the calibration is fitted
        on the evaluation's (dev) examples and kept in ``cfg["calibration"]``
        (``spacy_hcparse.graph.calibration``: a temperature, then an isotonic map), so a trained
        pipeline writes calibrated probabilities with no further step;
        ``spacy evaluate`` does not refit. ``prob_temperature`` (null: the fitted calibration):
        a temperature that replaces it, without the map. Also ``token._.hc_dep_prob``.
    cpu_blas: on a CPU, the model's matrix products use numpy's BLAS (``"numpy"``: OpenBLAS in
        numpy's wheels) or thinc's blis (``"blis"``), which is several times slower on some CPUs
        (``spacy_hcparse.blas``); parses agree up to the order of summation.
    threads: the threads the host work (decoding, labels, probabilities; numba, over the spans of
        a batch) and numpy's BLAS may use; 1 runs serially, as spaCy's CPU models do.
    set_tags: write the tags of the model's POS and TAG objectives (``TagScorers.v1``) on the
        tokens that have none, so that a tagger earlier in the pipeline keeps its tags; a ``DEP``
        objective only trains the encoder. Whitespace tokens get ``SPACE`` and ``_SP``.
    scorer: the scorer ``score`` calls (``spacy_hcparse.parser_scorer.v1``).
    projectivize: train on pseudo-projective gold (``graph.graph_gold``: non-projective arcs
        lifted, their labels decorated) and deprojectivize the written parses, so that a
        projective decoder can learn non-projective trees; ``label_freq_cutoff``: decorated
        labels seen fewer times in the training data are not learned.
    """
    watch_compiling()
    compile_ahead(type(decoder).__name__, head_probs, threads)
    return GraphParser(nlp.vocab, model, name, decoder=decoder, loss=loss,
                       labeler=Labeler(valency=label_valency, keep_doc_labels=keep_doc_labels),
                       init_from_doc=init_from_doc, doc_arc_bonus=doc_arc_bonus, head_probs=head_probs,
                       prob_temperature=prob_temperature, set_tags=set_tags, scorer=scorer, cpu_blas=cpu_blas,
                       threads=threads, projectivize=projectivize, label_freq_cutoff=label_freq_cutoff)
