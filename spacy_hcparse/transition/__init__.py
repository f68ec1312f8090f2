"""The transition parser ``hc_transition_parser``: its arc-standard system, tagger, learners,
models and component.

- system (numpy + numba only: no spaCy or thinc import, so the hot loops run compiled):
  configurations (``state``), moves (``moves``), static and dynamic oracles (``oracle``,
  ``dynamic_oracle``), feature templates (``templates``), hashed scoring (``hashed_scoring``),
  greedy and beam search (``search``), training walks guided by the dynamic oracle for scorers
  outside numba (``guided``) and the tagging kernel for the tag features (``tagging``);
- tagger: the perceptron tagger layer (``perceptron_tagger``);
- learning: averaged perceptron updates (``perceptron``), the tagger's training
  (``tagger_trainer``), the neural model's loss (``move_loss``) and the pseudo-projective gold
  (``projective_gold``);
- model: what the component and its models exchange (``transition_types``), the perceptron and
  neural models (``perceptron_model``, ``neural_model``), their learners (``perceptron_learner``,
  ``neural_learner``) and the registered architectures (``transition_model``);
- component: ``transition_parser`` (the ``hc_transition_parser`` factory and pipe).

Layering (``tests/test_layering.py``): each group imports the ones listed before it and the
shared ground below (``decoders``, ``layers``, ``learning``, ``segment``, ``names``, ``components``).
"""
