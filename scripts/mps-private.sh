# mps-private.sh (sourced, not run): NVIDIA's MPS control daemon with a private pipe/log directory, so that
# this shell's children become MPS clients and nothing else on the machine is switched to MPS.
# Used by scripts/gpu-check.sh (its MPS pass) and bench/share_gpu/mps_knobs.sh.
#   mps_private_start  exports CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY (a new /tmp/zh-mps-*),
#                      starts `nvidia-cuda-mps-control -d` with an EXIT trap that stops it; status 1 when
#                      the daemon did not start
#   mps_private_stop   `echo quit | nvidia-cuda-mps-control`, drops the trap, prints the control log's tail
mps_private_quit() { echo quit | nvidia-cuda-mps-control >/dev/null 2>&1; }

mps_private_start() {
  local dir
  dir=$(mktemp -d /tmp/zh-mps-XXXXXX) || return 1  # short: the pipe directory holds Unix sockets (108 bytes)
  export CUDA_MPS_PIPE_DIRECTORY="$dir/pipe" CUDA_MPS_LOG_DIRECTORY="$dir/log"
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  trap mps_private_quit EXIT
  if ! nvidia-cuda-mps-control -d; then
    trap - EXIT
    return 1
  fi
  sleep 1
}

mps_private_stop() {
  mps_private_quit
  trap - EXIT
  sleep 1
  tail -5 "$CUDA_MPS_LOG_DIRECTORY/control.log" 2>/dev/null
}
