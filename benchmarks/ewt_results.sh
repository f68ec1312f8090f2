#!/usr/bin/env bash
# The README's results table: train every EWT pipeline it lists, then time and score them against
# spaCy's parser in turns (benchmarks/parser_vs_spacy.py prints the table). Hours on 2 cores.
# Needs corpus/UD_English-EWT (`python -m spacy project run fetch`, then `convert`), en_core_web_md for the
# vectors rows and sentence-transformers/all-MiniLM-L6-v2 for the transformer rows.
set -e
T="python scripts/train.py"; C="--corpus corpus/UD_English-EWT --lang en"; O=training/UD_English-EWT
V="-- --paths.vectors en_core_web_md"; X="-- --paths.transformer sentence-transformers/all-MiniLM-L6-v2"
$T parser configs/spacy_parser.cfg $O/spacy_parser $C; $T parser configs/spacy_parser_tuned.cfg $O/spacy_parser_tuned $C
$T hc_parser configs/ewt_fast.cfg $O/fast $C & $T hc_parser configs/ewt_accurate_single.cfg $O/accurate_single $C
$T hc_transition_parser configs/ewt_transition_neural.cfg $O/neural $C --eval-frequency 500
$T hc_parser configs/ewt_vectors.cfg $O/ewt_vectors $C $V; $T parser configs/spacy_parser_vectors.cfg $O/spacy_parser_vectors $C $V
$T hc_parser configs/ewt_trf.cfg $O/ewt_trf $C $X; $T parser configs/spacy_parser_trf.cfg $O/spacy_parser_trf $C $X
wait
python -m spacy assemble configs/ewt_accurate.cfg $O/accurate \
    --paths.graph $O/fast/model-best --paths.transition $O/neural/model-best
OMP_NUM_THREADS=1 python benchmarks/parser_vs_spacy.py --gold corpus/UD_English-EWT/test.conllu \
    --peer $O/spacy_parser/model-best --model spacy_tuned=$O/spacy_parser_tuned/model-best \
    --model fast=$O/fast/model-best --model transition_neural=$O/neural/model-best \
    --model accurate=$O/accurate --model accurate_single=$O/accurate_single/model-best --repeats 5 \
    --model vectors=$O/ewt_vectors/model-best --model spacy_vectors=$O/spacy_parser_vectors/model-best \
    --model trf=$O/ewt_trf/model-best --model spacy_trf=$O/spacy_parser_trf/model-best
