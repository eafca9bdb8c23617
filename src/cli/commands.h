#ifndef TGL_CLI_COMMANDS_H
#define TGL_CLI_COMMANDS_H

#include <stdio.h>

/* Each subcommand gets argv from its own name on and returns the process exit code. */
int tgl_cmd_info(int argc, char **argv);
int tgl_cmd_devices(int argc, char **argv);
int tgl_cmd_warmup(int argc, char **argv);
int tgl_cmd_tune(int argc, char **argv);
int tgl_cmd_kernels(int argc, char **argv);
/* `tensorgl doctor`: every op of the standard set on the device against the CPU backend. */
int tgl_cmd_doctor(int argc, char **argv);
int tgl_cmd_version(int argc, char **argv);
int tgl_cmd_bench(int argc, char **argv);
/* The usage of every form of `tensorgl bench` (cmd_bench.c). */
void tgl_cmd_bench_usage(FILE *f);
/* `tensorgl bench [--ops ...]`: the standard set in one table (called by tgl_cmd_bench). */
int tgl_cmd_bench_suite(int argc, char **argv);
/* `tensorgl bench gemm` (called by tgl_cmd_bench). */
int tgl_cmd_bench_gemm(int argc, char **argv);
/* `tensorgl bench attention` and `tensorgl bench conv2d` (called by tgl_cmd_bench). */
int tgl_cmd_bench_model(int argc, char **argv);
/* `tensorgl bench engine`: first use cold/warm, round trip, dependent chain, transfers, alloc/free. */
int tgl_cmd_bench_engine(int argc, char **argv);
/* `tensorgl bench models`: the llama and resnet examples' forward passes, end to end. */
int tgl_cmd_bench_models(int argc, char **argv);
/* `tensorgl replay PATH`: re-executes a trace, optionally comparing every call's inputs. */
int tgl_cmd_replay(int argc, char **argv);
#endif
