/* Times how long the GL driver takes to build each kernel variant given on the command line
 * (files written by `tensorgl kernels --dump DIR --api gl`): compile and link, then one dispatch
 * of one workgroup, since llvmpipe generates a kernel's code at its first dispatch. Run it with
 * the driver's shader cache off (MESA_SHADER_CACHE_DISABLE=true) to see cold compiles.
 * A developer's tool, not part of the library: scripts/compile-time.sh builds and runs it. */
#include "gl_tool.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s KERNEL.comp...\n", argv[0]);
        return 2;
    }
    if (!tool_make_current()) {
        fprintf(stderr, "compile_time: no surfaceless EGL context with desktop GL 4.3\n");
        return 1;
    }
    printf("%s\n", (const char *)glGetString(GL_VERSION));
    /* Every binding a kernel may use gets a buffer, so the dispatch reads and writes memory that
     * exists; uniforms stay 0, so the kernels' loops run no iterations. */
    GLuint buf;
    glGenBuffers(1, &buf);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
    glBufferData(GL_SHADER_STORAGE_BUFFER, 1 << 20, NULL, GL_STATIC_DRAW);
    for (GLuint i = 0; i < 8; i++)
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, i, buf);
    int failed = 0;
    double total = 0;
    for (int i = 1; i < argc; i++) {
        char *text = tool_read_file(argv[i]);
        if (!text) {
            fprintf(stderr, "compile_time: cannot read %s\n", argv[i]);
            failed = 1;
            continue;
        }
        double t0 = tool_seconds();
        GLuint sh = glCreateShader(GL_COMPUTE_SHADER), prog = glCreateProgram();
        glShaderSource(sh, 1, (const GLchar *const *)&text, NULL);
        glCompileShader(sh);
        glAttachShader(prog, sh);
        glLinkProgram(prog);
        GLint linked = 0;
        glGetProgramiv(prog, GL_LINK_STATUS, &linked);
        double t1 = tool_seconds(), t2 = t1;
        if (linked) {
            glUseProgram(prog);
            glDispatchCompute(1, 1, 1);
            glFinish();
            t2 = tool_seconds();
        }
        GLenum err = glGetError();
        if (!linked || err != GL_NO_ERROR) {
            fprintf(stderr, "compile_time: %s: %s (GL error 0x%x)\n", argv[i], linked ? "dispatch failed" : "link failed",
                    err);
            failed = 1;
        }
        printf("%8.2f s link %8.2f s first dispatch  %s\n", t1 - t0, t2 - t1, argv[i]);
        fflush(stdout);
        total += t2 - t0;
        glDeleteProgram(prog);
        glDeleteShader(sh);
        free(text);
    }
    printf("%8.2f s in all, %d kernels\n", total, argc - 1);
    return failed;
}
