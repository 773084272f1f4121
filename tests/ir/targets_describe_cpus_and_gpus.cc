// Hardware descriptors (ir/target.h): the CUDA targets' limits, the stable text form that keys
// tuning records (read back exactly, for CPUs and GPUs), and --target-option's overrides with
// the errors that name what to write instead.
#include <gtest/gtest.h>

#include "ir/cuda_device.h"
#include "ir/target.h"

namespace tlmc::ir {
namespace {

TEST(Targets, NamedGpusHaveTheirDataSheetLimits) {
  const std::optional<Target> a100 = parse_target("cuda-sm80");
  ASSERT_TRUE(a100);
  ASSERT_TRUE(a100->is_cuda());
  std::string why;
  if (find_cuda_gpu(&why)) GTEST_SKIP() << "a GPU is here: a named SM takes its limits";
  EXPECT_FALSE(a100->runs_here);
  EXPECT_EQ(a100->descriptor(),
            "gpu1 sm=80 sms=108 warp=32 threads/block=1024 threads/sm=2048 blocks/sm=32 "
            "regs/sm=65536 regs/block=65536 regs/thread=255 smem/block=48K "
            "smem/block-optin=163K smem/sm=164K l2=40960K bw=2039GB/s fp32=19492GF/s "
            "device=a100-sxm");
  const std::optional<Target> h100 = parse_target("cuda-sm90");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->descriptor(),
            "gpu1 sm=90 sms=132 warp=32 threads/block=1024 threads/sm=2048 blocks/sm=32 "
            "regs/sm=65536 regs/block=65536 regs/thread=255 smem/block=48K "
            "smem/block-optin=227K smem/sm=228K l2=51200K bw=3352GB/s fp32=66908GF/s "
            "device=h100-sxm");
  // The float32 peak is the SMs' lanes at the boost clock: 132 x 128 x 2 x 1.98 GHz.
  EXPECT_EQ(h100->gpu.fp32_gflops, 132 * fp32_lanes_per_sm(90) * 2 * 198 / 100);
}

TEST(Targets, DescriptorsReadBackExactly) {
  for (const char* name : {"x86-64", "x86-64-avx2", "x86-64-avx512", "cuda-sm80", "cuda-sm90"}) {
    Target t = *parse_target(name);
    const std::optional<Target> back = parse_descriptor(t.descriptor());
    ASSERT_TRUE(back) << t.descriptor();
    EXPECT_EQ(back->descriptor(), t.descriptor());
    EXPECT_EQ(back->name, name);
    EXPECT_EQ(back->kind, t.kind);
  }
  Target cold = *parse_target("x86-64");
  cold.cold_weights = true;
  EXPECT_TRUE(parse_descriptor(cold.descriptor())->cold_weights);
  // A GPU whose limits contradict each other is no descriptor.
  Target bad = *parse_target("cuda-sm90");
  bad.gpu.smem_per_block = 300 * 1024;
  EXPECT_FALSE(parse_descriptor(bad.descriptor()));
  EXPECT_FALSE(parse_descriptor("gpu1 sm=90"));
  EXPECT_FALSE(parse_descriptor("hw2 isa=avx2"));
}

TEST(Targets, OptionsOverrideOneField) {
  Target gpu = *parse_target("cuda-sm90");
  EXPECT_EQ(set_target_option(gpu, "sms=114"), "");
  EXPECT_EQ(set_target_option(gpu, "smem/block-optin=99K"), "");
  EXPECT_EQ(set_target_option(gpu, "bw=2000GB/s"), "");
  EXPECT_EQ(set_target_option(gpu, "fp32=51000"), "");
  EXPECT_EQ(gpu.gpu.sms, 114);
  EXPECT_EQ(gpu.gpu.smem_optin_per_block, 99 * 1024);
  EXPECT_EQ(gpu.gpu.bandwidth_gbs, 2000);
  EXPECT_EQ(gpu.gpu.fp32_gflops, 51000);
  EXPECT_EQ(gpu.name, "cuda-sm90");
  Target cpu = *parse_target("x86-64");
  EXPECT_EQ(set_target_option(cpu, "cores=5"), "");
  EXPECT_EQ(set_target_option(cpu, "l2=2M"), "");
  EXPECT_EQ(cpu.cores, 5);
  EXPECT_EQ(cpu.l2_bytes, 2 * 1024 * 1024);
}

TEST(Targets, BadOptionsSayWhatToWrite) {
  Target gpu = *parse_target("cuda-sm90");
  const std::string before = gpu.descriptor();
  EXPECT_EQ(set_target_option(gpu, "smem/block=300K"),
            "--target-option smem/block=300K: smem/block exceeds smem/block-optin");
  EXPECT_EQ(set_target_option(gpu, "sms=abc"),
            "--target-option sms=abc: 'abc' is not a valid sms (written as the descriptor "
            "writes it: sms=132)");
  EXPECT_EQ(set_target_option(gpu, "warp=64"),
            "--target-option warp=...: warp is 32 on every NVIDIA GPU");
  EXPECT_EQ(set_target_option(gpu, "regs/thread=300"),
            "--target-option regs/thread=300: regs/thread is at most 255 on every NVIDIA GPU");
  EXPECT_EQ(set_target_option(gpu, "cores=4"),
            "--target-option: cuda-sm90 has no field 'cores' (it has: sms, threads/block, "
            "threads/sm, blocks/sm, regs/sm, regs/block, regs/thread, smem/block, "
            "smem/block-optin, smem/sm, l2, bw, fp32, device)");
  EXPECT_EQ(set_target_option(gpu, "sms"),
            "--target-option takes KEY=VALUE (such as cores=4 or smem/block-optin=99K), not "
            "'sms'");
  EXPECT_EQ(gpu.descriptor(), before) << "a refused option changes nothing";
  Target cpu = *parse_target("x86-64-avx2");
  EXPECT_EQ(set_target_option(cpu, "isa=avx512"),
            "--target-option isa=...: the isa follows --target (" + target_names() + ")");
  EXPECT_EQ(set_target_option(cpu, "cores=0"),
            "--target-option cores=0: '0' is not a valid cores (written as the descriptor "
            "writes it: cores=" +
                std::to_string(parse_target("x86-64-avx2")->cores) + ")");
}

TEST(Targets, UnknownNamesSayWhatToName) {
  EXPECT_FALSE(parse_target("cuda-sm70"));
  EXPECT_EQ(unknown_target("cuda-sm70"),
            "CUDA 13 has no sm_70: it dropped Volta (the V100's sm_70) and older GPUs, which "
            "tlmc therefore cannot target; name cuda-sm80 or cuda-sm90");
  EXPECT_FALSE(parse_target("cuda-sm86"));
  EXPECT_NE(unknown_target("cuda-sm86").find("tlmc names cuda-sm80 and cuda-sm90"),
            std::string::npos);
  EXPECT_EQ(unknown_target("arm64"), "unknown target 'arm64' (known: " + target_names() + ")");
  std::string why;
  if (find_cuda_gpu(&why)) GTEST_SKIP() << "a GPU is here: --target cuda names it";
  EXPECT_FALSE(parse_target("cuda"));
  EXPECT_EQ(unknown_target("cuda"),
            "--target cuda is the GPU of this machine, and there is none "
            "here (" +
                why + "); name one instead: cuda-sm80 or cuda-sm90");
}

TEST(Targets, TheGpuHereIsDescribedWhenThereIsOne) {
  std::string why;
  const std::optional<GpuLimits> here = find_cuda_gpu(&why);
  if (!here) GTEST_SKIP() << "no CUDA GPU here: " << why;
  const std::optional<Target> t = parse_target("cuda");
  ASSERT_TRUE(t) << unknown_target("cuda");
  EXPECT_TRUE(t->runs_here);
  EXPECT_GE(t->gpu.sm, 80);
  EXPECT_GT(t->gpu.sms, 0);
  EXPECT_GT(t->gpu.bandwidth_gbs, 100);
  EXPECT_EQ(parse_descriptor(t->descriptor())->descriptor(), t->descriptor());
}

}  // namespace
}  // namespace tlmc::ir
