# rukh's confining init for linux/amd64: PID 1 of a confined invocation's
# namespaces. argv: [rukh-confine, program, args...]; envp is passed on.
# Descriptor 4 is the report pipe, 5 the prepared steps (kernel/
# confineprep_linux.go): rukh decides and prepares every step of the
# confinement in its own process; this init only makes the calls, in
# order, and stops at the first that fails. A step is 64 bytes:
#   word 0: bits 0-15 the system call (0xffff: store arg1 at the address
#           arg0; 0xfffe: or arg1 into the word at arg0; 0xfffd: fail,
#           with errno 0, unless arg0 is arg1), bits 32-55 a 4-bit mode
#           per argument (0 as is, 1 an offset into the steps' buffer, 2
#           the result of the earlier step it numbers, which a step of
#           the init's own cannot take from one of the program's);
#   words 1-6 the arguments; word 7: bit 0, the step runs in the program's
#           process, between the fork and the exec.
# The buffer starts with "RKC1" and the number of steps. A failed step
# reports its number and errno (record 6; steps that cannot be read,
# 0xffff a read error, 0xfffe not "RKC1", 0xfffd too many, 0xfffc cut
# short, 0xfffb larger than the buffer); then the init reports the
# program's rusage (7: peak resident KiB, twice; 8: CPU milliseconds)
# before its status (1), as initproto.go says.
#
# Started warm (argv [rukh-confine-warm], no program), it waits on
# descriptor 4, a SOCK_SEQPACKET socket, for one message: the steps as
# above, the call's descriptors as SCM_RIGHTS (an argument of mode 3 is
# the descriptor received at the position it numbers), and after the
# steps an exec block that the pseudo-call 0xfffc (arg0: the block's
# offset in the buffer) turns into the program's argv and envp: argc and
# envc (a word each), then the argc+1 and envc+1 words of each array,
# offsets in the buffer (0 ends each), made addresses here. At EOF it
# exits 0 having run nothing.
	.set	BUFSZ, 65536
	.set	MAXSTEPS, 256
	.set	CMSGSZ, 16+4*16		# up to 16 descriptors
	.text
	.globl _start
_start:
	mov	(%rsp), %rdi		# argc
	lea	8(%rsp), %r12		# argv
	lea	8(%r12,%rdi,8), %r13	# envp
	sub	$32, %rsp		# records at 0..31(%rsp)
	lea	buf(%rip), %r15
	cmp	$2, %rdi
	jge	fresh
	cmp	$1, %rdi
	jne	done			# nothing to run: the namespace probe
	mov	(%r12), %rax
	cmpl	$0x6d726177, 13(%rax)	# "rukh-confine-warm"
	jne	done
	lea	iov(%rip), %rax		# recvmsg(4, &msg, MSG_CMSG_CLOEXEC)
	mov	%r15, (%rax)
	movq	$BUFSZ, 8(%rax)
	lea	msg(%rip), %rsi
	mov	%rax, 16(%rsi)		# msg_iov
	movq	$1, 24(%rsi)		# msg_iovlen
	lea	cmsg(%rip), %rax
	mov	%rax, 32(%rsi)		# msg_control
	movq	$CMSGSZ, 40(%rsi)	# msg_controllen
warmrecv:
	mov	$47, %eax
	mov	$4, %edi
	lea	msg(%rip), %rsi
	mov	$0x40000000, %edx
	syscall
	cmp	$-4, %rax
	je	warmrecv
	test	%rax, %rax
	js	specfailed
	jz	done			# EOF: rukh dropped it before any call
	mov	%eax, %ebx
	testl	$0x28, msg+48(%rip)	# MSG_TRUNC, MSG_CTRUNC
	jnz	cutshort
	xor	%ecx, %ecx		# the descriptors: one SCM_RIGHTS or none
	mov	msg+40(%rip), %rax
	cmp	$16, %rax
	jb	nofds
	lea	cmsg(%rip), %rsi
	cmpl	$1, 8(%rsi)		# SOL_SOCKET
	jne	badmagic
	cmpl	$1, 12(%rsi)		# SCM_RIGHTS
	jne	badmagic
	mov	(%rsi), %rcx		# cmsg_len
	sub	$16, %rcx
	shr	$2, %ecx
nofds:
	mov	%ecx, nfds(%rip)
	jmp	specread
fresh:
	xor	%ebx, %ebx		# bytes read
readspec:
	xor	%eax, %eax		# read(5, buf+n, BUFSZ-n)
	mov	$5, %edi
	lea	(%r15,%rbx), %rsi
	mov	$BUFSZ, %edx
	sub	%ebx, %edx
	jz	toolarge		# larger than this init takes
	syscall
	cmp	$-4, %rax
	je	readspec
	test	%rax, %rax
	js	specfailed
	jz	specread
	add	%eax, %ebx
	jmp	readspec
specread:
	cmp	$8, %ebx
	jb	cutshort
	cmpl	$0x31434b52, (%r15)	# "RKC1"
	jne	badmagic
	mov	4(%r15), %ecx		# steps
	cmp	$MAXSTEPS, %ecx
	ja	toomany
	shl	$6, %ecx
	add	$8, %ecx
	cmp	%ebx, %ecx
	ja	cutshort
	xor	%ebp, %ebp		# the init's steps: those without bit 0
	call	steps
	mov	$57, %eax		# fork
	syscall
	test	%rax, %rax
	js	forkfailed
	jz	child
	mov	%rax, %r14		# the program's pid
reap:
	mov	$61, %eax		# wait4(-1, &status, 0, &rusage)
	mov	$-1, %rdi
	lea	28(%rsp), %rsi
	xor	%edx, %edx
	lea	rusage(%rip), %r10
	syscall
	cmp	$-4, %rax		# EINTR
	je	reap
	test	%rax, %rax
	js	done			# ECHILD: cannot happen while the program lives
	cmp	%r14, %rax
	jne	reap
	lea	rusage(%rip), %rsi
	movl	$7, (%rsp)		# the program's peak resident size
	mov	32(%rsi), %rax
	mov	%eax, 4(%rsp)
	mov	(%rsi), %rax		# CPU: (utime+stime) s*1000 + us/1000
	add	16(%rsi), %rax
	imul	$1000, %rax, %r8
	mov	8(%rsi), %rax
	add	24(%rsi), %rax
	xor	%edx, %edx
	mov	$1000, %edi
	div	%rdi
	add	%r8, %rax
	movl	$8, 16(%rsp)
	mov	%eax, 20(%rsp)
	movl	$1, 24(%rsp)		# ReportStatus; wait4 wrote its value
	mov	$98, %eax		# getrusage(RUSAGE_CHILDREN, &rusage)
	mov	$-1, %rdi
	lea	rusage(%rip), %rsi
	syscall
	lea	rusage(%rip), %rsi
	movl	$7, 8(%rsp)		# the peak of every process reaped
	mov	32(%rsi), %rax
	mov	%eax, 12(%rsp)
	mov	$32, %edx
	call	write
done:
	mov	$231, %eax		# exit_group(0)
	xor	%edi, %edi
	syscall
specfailed:
	neg	%eax
	mov	$0xffff, %ebx		# the steps could not be read
	jmp	failed
badmagic:
	mov	$0xfffe, %ebx
	jmp	badspec
toomany:
	mov	$0xfffd, %ebx
	jmp	badspec
cutshort:
	mov	$0xfffc, %ebx
	jmp	badspec
toolarge:
	mov	$0xfffb, %ebx
badspec:
	mov	$22, %eax		# EINVAL
failed:					# step %ebx failed with errno %eax
	shl	$16, %ebx
	or	%eax, %ebx
	movl	$6, (%rsp)
	mov	%ebx, 4(%rsp)
	mov	$8, %edx
	call	write
	mov	$231, %eax
	mov	$126, %edi
	syscall
forkfailed:
	neg	%eax
	movl	%eax, 4(%rsp)
	movl	$3, (%rsp)		# ReportFork
	mov	$8, %edx
	call	write
	mov	$231, %eax
	mov	$126, %edi
	syscall
child:
	mov	$1, %ebp		# the program's steps: those with bit 0
	call	steps
	mov	8(%r12), %rdi		# execve(argv[1], &argv[1], envp)
	lea	8(%r12), %rsi
	mov	%r13, %rdx
	mov	$59, %eax
	syscall
	neg	%eax
	movl	%eax, 4(%rsp)
	movl	$2, (%rsp)		# ReportExec
	mov	$8, %edx
	call	write
	mov	$231, %eax
	mov	$127, %edi
	syscall

# steps runs the steps whose bit 0 is %ebp; a failure does not return.
steps:
	xor	%ebx, %ebx		# step number
next:
	cmp	4(%r15), %ebx
	jae	stepsdone
	mov	%ebx, %eax
	shl	$6, %eax
	lea	8(%r15,%rax), %r8	# the step
	mov	56(%r8), %eax
	and	$1, %eax
	cmp	%ebp, %eax
	jne	skip
	mov	(%r8), %r9		# word 0
	lea	args(%rip), %rdi
	xor	%ecx, %ecx		# argument number
arg:
	mov	8(%r8,%rcx,8), %rax
	mov	%r9, %rdx
	shr	$32, %rdx
	lea	(,%rcx,4), %esi
	xchg	%ecx, %esi
	shr	%cl, %rdx
	xchg	%ecx, %esi
	and	$15, %edx
	cmp	$1, %edx
	jne	notoff
	cmp	$BUFSZ-8, %rax	# an offset: within the buffer
	jae	badstep
	add	%r15, %rax
	jmp	argdone
notoff:
	cmp	$2, %edx
	jne	notres
	cmp	%rbx, %rax		# a result: of an earlier step
	jae	badstep
	mov	%rax, %rdx		# of the program's: for the program's only
	shl	$6, %rdx
	testb	$1, 8+56(%r15,%rdx)
	jz	resultok
	test	%ebp, %ebp
	jz	badstep
resultok:
	lea	results(%rip), %rdx
	mov	(%rdx,%rax,8), %rax
	jmp	argdone
notres:
	cmp	$3, %edx
	jne	notrecv
	mov	nfds(%rip), %edx	# a received descriptor
	cmp	%rdx, %rax
	jae	badstep
	lea	cmsg+16(%rip), %rdx
	mov	(%rdx,%rax,4), %eax
	jmp	argdone
notrecv:
	test	%edx, %edx
	jnz	badstep
argdone:
	mov	%rax, (%rdi,%rcx,8)
	inc	%ecx
	cmp	$6, %ecx
	jb	arg
	movzwl	%r9w, %eax		# the call
	mov	args(%rip), %rdi
	mov	args+8(%rip), %rsi
	cmp	$0xffff, %eax
	jne	notstore
	mov	%rsi, (%rdi)
	xor	%eax, %eax
	jmp	result
notstore:
	cmp	$0xfffe, %eax
	jne	notor
	or	%rsi, (%rdi)
	xor	%eax, %eax
	jmp	result
notor:
	cmp	$0xfffd, %eax
	jne	notexpect
	xor	%eax, %eax
	cmp	%rsi, %rdi
	jne	failed			# errno 0: not what the step expects
	jmp	result
notexpect:
	cmp	$0xfffc, %eax
	jne	sys
	cmp	$BUFSZ-16, %rdi		# the exec block: argc, envc, the arrays
	jae	badstep
	lea	(%r15,%rdi), %r12
	mov	(%r12), %rsi		# argc
	lea	16(%r12), %rdi
	call	reloc
	lea	8(%rdi,%rsi,8), %r13	# envp: past argv's 0
	mov	8(%r12), %rsi		# envc
	mov	%r13, %rdi
	call	reloc
	lea	8(%r12), %r12		# so that 8(%r12) is argv[0], as above
	xor	%eax, %eax
	jmp	result
sys:
	mov	args+16(%rip), %rdx
	mov	args+24(%rip), %r10
	mov	args+32(%rip), %r8
	mov	args+40(%rip), %r9
	syscall
	cmp	$-4095, %rax
	jae	stepfailed
result:
	lea	results(%rip), %rdx
	mov	%rax, (%rdx,%rbx,8)
skip:
	inc	%ebx
	jmp	next
stepsdone:
	ret
stepfailed:
	neg	%eax
	jmp	failed
badstep:
	mov	$22, %eax		# EINVAL
	jmp	failed

reloc:					# %rsi offsets at %rdi, and their 0, made addresses
	cmp	$BUFSZ/8, %rsi
	jae	badstep
	mov	%rdi, %rax
	sub	%r15, %rax
	lea	8(%rax,%rsi,8), %rax	# the array and its 0 within the buffer
	cmp	$BUFSZ, %rax
	ja	badstep
	xor	%ecx, %ecx
relocnext:
	cmp	%rsi, %rcx
	jae	relocend
	mov	(%rdi,%rcx,8), %rax
	cmp	$BUFSZ, %rax
	jae	badstep
	add	%r15, %rax
	mov	%rax, (%rdi,%rcx,8)
	inc	%rcx
	jmp	relocnext
relocend:
	cmpq	$0, (%rdi,%rsi,8)
	jne	badstep
	ret

write:					# write(4, records, %rdx), retried on EINTR
	mov	%rdx, %r8
again:
	mov	$1, %eax
	mov	$4, %edi
	lea	8(%rsp), %rsi		# the caller's records, above the return address
	mov	%r8, %rdx
	syscall
	cmp	$-4, %rax
	je	again
	ret

	.bss
	.align	16
buf:	.space	BUFSZ
args:	.space	48
results: .space	MAXSTEPS*8
rusage:	.space	144
msg:	.space	56
iov:	.space	16
	.align	8
cmsg:	.space	CMSGSZ
nfds:	.space	4
	.section .note.GNU-stack,"",@progbits
