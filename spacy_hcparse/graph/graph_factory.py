"""The ``hc_parser`` factory and its defaults, defined here once: the ``default_config`` (what
``nlp.add_pipe("hc_parser")`` builds, and what a config leaves out gets). Python code builds the
component through the factory, so ``GraphParser`` itself has no defaults to disagree with these.
"""
from typing import Callable, Optional

from spacy.language import Language
from thinc.api import Config, Model

from ..compiling import watch_compiling
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
    compiling, when slow, is said on stderr (``compiling``)."""
    watch_compiling()
    return GraphParser(nlp.vocab, model, name, decoder=decoder, loss=loss,
                       labeler=Labeler(valency=label_valency, keep_doc_labels=keep_doc_labels),
                       init_from_doc=init_from_doc, doc_arc_bonus=doc_arc_bonus, head_probs=head_probs,
                       prob_temperature=prob_temperature, set_tags=set_tags, scorer=scorer, cpu_blas=cpu_blas,
                       threads=threads, projectivize=projectivize, label_freq_cutoff=label_freq_cutoff)
